// Writes the hash of the extension's sources into the built package.json as `leappSourceHash`.
//
// The hash is sha256 over the sorted relative paths (POSIX separators) of every file under src/ and
// style/, plus package.json and tsconfig.json; for each file: path, NUL, byte length, NUL, bytes.
// tests/test_labextension.py recomputes it in Python (no Node needed) and fails on a mismatch, so a
// committed bundle cannot drift from the sources it was built from.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');

function walk(dir) {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

export function sourceHash() {
  const files = [...walk(join(root, 'src')), ...walk(join(root, 'style')),
    join(root, 'package.json'), join(root, 'tsconfig.json')];
  const entries = files.map(path => [relative(root, path).split(sep).join('/'), path]);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const hash = createHash('sha256');
  for (const [name, path] of entries) {
    const data = readFileSync(path);
    hash.update(Buffer.from(name, 'utf8'));
    hash.update(Buffer.from(`\0${data.length}\0`, 'utf8'));
    hash.update(data);
  }
  return hash.digest('hex');
}

const target = process.argv[2];
if (target) {
  const manifest = JSON.parse(readFileSync(target, 'utf8'));
  manifest.leappSourceHash = sourceHash();
  writeFileSync(target, JSON.stringify(manifest, null, 2) + '\n');
  console.log(`leappSourceHash ${manifest.leappSourceHash} -> ${target}`);
} else {
  console.log(sourceHash());
}
