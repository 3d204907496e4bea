// Package htmltext turns a fetched page into the text the platform indexes:
// the main content without navigation, headers, footers and cookie banners,
// plus the metadata and links the crawler, the chunker and the graph need.
//
// Main content is located by a maintained extraction library: go-readability
// first (it keeps the document's own structure and order, which matters for
// reference documentation such as Sphinx pages: code examples and definition
// lists stay intact), with navigation, sidebars and banners removed from its
// result (on short pages it takes the column beside the text along). When
// the page has a main landmark (<main> or role="main", minus navigation,
// sidebars and banners), readability is given only that. Ids that name a
// section after its heading are hidden from readability, which reads words
// such as "comments" or "header" in ids as layout, and so are the classes
// of spans named comments (the comments of Doxygen's code listings, which
// are not in pre or code). Navigation is a nav, footer or aside element, a
// header outside article, aside, main, nav and section (inside them it is
// that part's title block: gi-docgen and Docusaurus put the page's h1
// there), a navigation, banner or similar role, an element with id or a
// class "footer", one named sidebar, breadcrumb or navbar, and, when mostly
// links, one whose id or a class starts with "nav" (also when short and
// without prose: DocBook's navheader) or names a menu, and a short bar of
// rel="next"/"prev"/"up" links (texinfo) or of links whose class or id
// holds the word prev, previous or next (pydata-sphinx-theme's
// a.left-prev). Elements hidden by an attribute or inline style, and those
// shown only in print (class onlyprint, print-only, Bootstrap's d-none
// with d-print-*), hold no text. Readability's result
// keeps its classes so that these rules apply to it. Readability credits a
// paragraph's score only to its nearest ancestors, so on pages whose
// sections nest deeply it can keep one subsection and drop the rest; when
// its text is under 90% of the page's content core (the deepest element
// holding at least 85% of the prose, that is text outside links, of the body
// or of the main landmark, boilerplate and class-named comment threads not
// counted; a core with under 400 bytes of prose must hold 120 bytes of it
// and 85% of all the text, links included, as on a gi-docgen property page
// whose small tables of links readability drops) and lies inside it, the
// core is used instead, widened to the element that also holds a title and
// introduction beside it unless that is the body ("container"); when the
// sections beside the core hold 1,000 bytes of prose or more, readability
// must also keep half of them. When readability's text lies beside the core
// instead (a Haddock module page: it keeps the synopsis, which sits next to
// the documentation under styled paragraphs rather than headings), the
// nearest ancestor of the core that holds it is used, never the body (the
// landmark may be). The container
// wins too when readability lacks its first paragraph (rustdoc trait pages:
// the list of implementors outweighs the description in bytes). When
// readability returns suspiciously little (under 400 bytes on a page with
// more than twice as much text outside navigation; on link-list pages it
// tends to pick the footer), the main landmark is used, else go-trafilatura
// with FavorRecall on the page without its navigation, title, scripts and
// styles (on a page without text blocks it falls back to all the text,
// title first), and only when all
// fail the body without its navigation. A document too large for the
// libraries (more than MaxLibraryNodes element and text nodes, or a sum of
// their depths above MaxLibraryWork: readability and trafilatura walk
// subtrees over and over, and their time grows with nodes times depth) gets
// none of this: its main landmark, else its body, without navigation
// ("simple"). Page.Extractor says which one was used. Readability drops the heading that repeats the page title, and
// trafilatura often drops it too; the page's own top heading (the first h1
// of the landmark or body that is not the site's name, else an h2 the title
// holds, else an h3–h6 it holds; section numbers aside, or three quarters of
// the heading's words) is put back in front unless the text opens with it.
// The content node is then rendered to plain text by this package: one block
// per paragraph, list item, table row, definition term or code block (a
// table row holding a heading lays out a title block, GTK-Doc's and
// Doxygen's: its cells are blocks and the heading a heading); blocks
// separated by a blank line (list items, table rows and term/definition
// pairs by a single newline); a row's cells joined by " | ", empty cells
// at its start and end left out;
// preformatted text kept verbatim, but for a listing's line numbers (digits
// in an element whose class names them: Pygments' linenos, Doxygen's
// lineno, Rouge's gutter); heading text on a line of its own;
// permalink markers (¶, #, §, or an invisible character: Docusaurus ends
// each heading with a link holding a zero-width space) dropped.
//
// Page.Sections cuts Page.Text at every heading into contiguous ranges that
// carry their heading path, which is what the chunker splits on, and
// Page.Headings gives each heading's offset, so that Text[h.Start:h.End] is
// the heading text. Offsets are byte offsets into Text, which is valid UTF-8.
//
// Metadata: title (<title>, og:title, first h1), description, language (the
// html lang attribute, Content-Language, og:locale, else detected from the
// text with whatlanggo), published and modified dates (article:* and other
// meta tags, JSON-LD datePublished/dateModified, <time> in the content, else
// the Last-Modified header for Modified), <link rel=canonical>, robots
// directives (meta robots and X-Robots-Tag), every outgoing http(s) link with
// its anchor text (flagged when inside the main content), and the texts of
// inline <code> spans.
//
// text/plain (and text/markdown) documents pass through with normalised line
// ends. Other content types give ErrUnsupportedType.
package htmltext
