// Runs the reference TOON implementation over cases read from standard input, one
// JSON object per line: {"json": <JSON text>, "ours": <pkg/toon's TOON of it>,
// "options": <the reference's encode options>}. For each it writes one line:
// {"ref": <the reference's TOON of the same value>, "back": <the reference's decoding
// of "ours", as JSON text, unless keys were folded>, "want": <the value as JSON text>, "error": <message>}.
// Usage: node reference.mjs <path of @toon-format/toon's dist/index.mjs>
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const { encode, decode } = await import(pathToFileURL(process.argv[2]).href);
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line === '') continue;
  const c = JSON.parse(line);
  const out = {};
  try {
    const value = JSON.parse(c.json);
    out.want = JSON.stringify(value);
    out.ref = encode(value, c.options);
    // Folded keys are not decoded: a literal dotted key beside a folded one cannot
    // expand back (the spec's documented limit of folding), so only the encoding is
    // compared for those.
    if (c.options.keyFolding !== 'safe') {
      out.back = JSON.stringify(decode(c.ours, { indent: c.options.indent ?? 2, strict: true }));
    }
  } catch (e) {
    out.error = String(e && e.message);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
