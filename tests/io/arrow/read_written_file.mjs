// Reads a file written by sluice's ArrowFileWriter (arrow_file_writer_test.cc)
// with the official Apache Arrow JavaScript library and checks its schema
// and every value against the formula the test wrote them from. Exits 0 and
// prints "ok ROWS rows" on success; throws (exit 1) on the first mismatch.
//
//   node read_written_file.mjs FILE NODE_MODULES_DIR
//
// Rows i = 0..9 in record batches of 4, 3 and 3 rows:
//   blob  binary                  i % 5 bytes, byte j = (7 i + j) & 255;
//                                 null at row 2
//   label int64                   3 i - 5; null at row 5
//   vec   fixed_size_list<f32, 4> [i, i + 0.25, i + 0.5, i + 0.75];
//                                 null at row 7
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [file, modulesDir] = process.argv.slice(2);
if (!file || !modulesDir) {
  console.error('usage: node read_written_file.mjs FILE NODE_MODULES_DIR');
  process.exit(2);
}
const { tableFromIPC, Type } = await import(pathToFileURL(
  resolve(modulesDir, 'apache-arrow', 'Arrow.node.mjs')).href);

const fail = (message) => { throw new Error(`${file}: ${message}`); };
const table = tableFromIPC(readFileSync(file));
const types = table.schema.fields.map((f) => [f.name, f.type.typeId]);
const want = [['blob', Type.Binary], ['label', Type.Int],
              ['vec', Type.FixedSizeList]];
if (JSON.stringify(types) !== JSON.stringify(want)) {
  fail(`schema ${JSON.stringify(types)}, expected ${JSON.stringify(want)}`);
}
if (table.schema.fields[1].type.bitWidth !== 64) fail('label is not int64');
if (table.schema.fields[2].type.listSize !== 4) fail('vec list size');
const batchRows = table.batches.map((b) => b.numRows);
if (JSON.stringify(batchRows) !== '[4,3,3]') fail(`batches ${batchRows}`);
const blob = table.getChild('blob');
const label = table.getChild('label');
const vec = table.getChild('vec');
for (let i = 0; i < 10; ++i) {
  const b = blob.get(i);
  if (i === 2) {
    if (b !== null) fail('blob row 2 is not null');
  } else {
    const expected = Array.from({ length: i % 5 }, (_, j) => (7 * i + j) & 255);
    if (JSON.stringify(Array.from(b)) !== JSON.stringify(expected)) {
      fail(`blob row ${i}: ${Array.from(b)}`);
    }
  }
  const l = label.get(i);
  if (i === 5 ? l !== null : l !== BigInt(3 * i - 5)) fail(`label row ${i}: ${l}`);
  const v = vec.get(i);
  if (i === 7) {
    if (v !== null) fail('vec row 7 is not null');
  } else {
    const got = Array.from(v);
    const expected = [i, i + 0.25, i + 0.5, i + 0.75];
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      fail(`vec row ${i}: ${got}`);
    }
  }
}
console.log(`ok ${table.numRows} rows`);
