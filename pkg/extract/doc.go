// Package extract finds typed entities and relations in technical documentation
// and in search queries without a language model.
//
// Entities come from an embedded taxonomy (taxonomy.json, 76 types) and
// gazetteer (gazetteer.json, known names and aliases per type), from pattern
// rules (identifiers in code, qualified names, calls, CamelCase and snake_case
// names, environment variables, file names, commands, versions, acronyms with
// their expansions) and from terms a Learner has promoted after seeing them
// recur across documents (headings, code spans, anchor texts, capitalised
// names). Every name is normalised to a canonical key (Key), which is the entity
// id: "Postgres", "PostgreSQL" and "postgresql" are one entity.
//
// Relations come from lexical patterns ("X uses Y", "X is built on Y", ...), from
// qualified names (json.dumps is PART_OF json) and versions (Python 3.11 is a
// VERSION_OF Python), from co-occurrence in chunks weighted by NPMI, and from
// the document's hyperlinks (LINKS_TO). Every relation keeps its evidence.
package extract
