// Writes the Arrow IPC reference files of arrow_reference_test.cc with the
// official Apache Arrow JavaScript library (an implementation independent of
// sluice's reader), plus expected.json: every value of every column, written
// from the same JavaScript arrays the files were made from.
//
//   node write_reference_files.mjs OUT_DIR NODE_MODULES_DIR
//
// NODE_MODULES_DIR holds the pinned apache-arrow package (scripts/setup.sh
// installs it under out/node/node_modules).
//
// Files in OUT_DIR:
//   reference.arrow / reference.arrows  every supported type, with nulls, in
//                                       three record batches (file / stream)
//   dictionary.arrows, timestamp.arrows, decimal.arrows
//                                       one unsupported feature each (the
//                                       test builds the rest by hand)
//   expected.json                       {"batch_rows": [...], "columns": {...}}
// JSON encoding of values: null for a null row; 64-bit integers as decimal
// strings; binary as an array of byte values; lists as arrays; structs as
// objects.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [outDir, modulesDir] = process.argv.slice(2);
if (!outDir || !modulesDir) {
  console.error('usage: node write_reference_files.mjs OUT_DIR NODE_MODULES_DIR');
  process.exit(2);
}
const {
  Binary, Bool, Dictionary, Field, FixedSizeList, Float16, Float32, Float64,
  Int16, Int32, Int64, Int8, LargeBinary, LargeList, LargeUtf8, List,
  Struct, Table, TimestampMillisecond, Uint16, Uint32, Uint64,
  Uint8, Utf8, Decimal, tableToIPC, vectorFromArray,
} = await import(pathToFileURL(
  resolve(modulesDir, 'apache-arrow', 'Arrow.node.mjs')).href);
mkdirSync(outDir, { recursive: true });

const bytes = (...values) => Uint8Array.from(values);
const audioType = new Struct([
  new Field('bytes', new Binary(), true),
  new Field('path', new Utf8(), true),
]);

// Column name -> [type, rows of batch 0, rows of batch 1, rows of batch 2].
// Floats are exactly representable in their type, so equality is exact.
const columns = {
  i8: [new Int8(), [-128, null, 127], [0, 1], [-1, null, 5, 6]],
  i16: [new Int16(), [-32768, 2, null], [32767, null], [7, 8, 9, -10]],
  i32: [new Int32(), [-2147483648, null, 2147483647], [0, 3], [null, 4, 5, 6]],
  i64: [new Int64(), [-(2n ** 63n), 1n, null], [2n ** 63n - 1n, -5n],
        [null, 9007199254740993n, 0n, 1n]],
  u8: [new Uint8(), [0, 255, null], [1, 2], [3, null, 4, 5]],
  u16: [new Uint16(), [65535, null, 0], [1, 2], [3, 4, null, 5]],
  u32: [new Uint32(), [4294967295, 0, null], [null, 7], [1, 2, 3, 4]],
  u64: [new Uint64(), [2n ** 64n - 1n, null, 0n], [5n, 6n], [7n, null, 8n, 9n]],
  f16: [new Float16(), [0.5, -1.25, null], [1024, 65504], [null, -0.0625, 3, 0]],
  f32: [new Float32(), [1.5, null, -2.25], [0.125, 1024],
        [null, 7.75, -0.5, 16777216]],
  f64: [new Float64(), [Math.PI, null, -1e300], [0.1, 2.5], [null, -0.0, 1e-300, 42]],
  flag: [new Bool(), [true, false, null], [false, true],
         [true, null, true, false]],
  bin: [new Binary(), [bytes(1, 2, 3), null, bytes()], [bytes(255), bytes(0, 0)],
        [null, bytes(9), bytes(10, 11), bytes(12)]],
  large_bin: [new LargeBinary(), [bytes(4, 5), bytes(), null], [null, bytes(6)],
              [bytes(7, 8, 9), bytes(1), null, bytes(2)]],
  text: [new Utf8(), ['hello', null, ''], ['héllo wörld', 'x'],
         [null, 'a', 'bc', 'def']],
  large_text: [new LargeUtf8(), ['', 'large', null], ['utf8 ✓', null],
               ['p', 'q', null, 'r']],
  fsl: [new FixedSizeList(3, new Field('item', new Float32(), true)),
        [[1, 2, 3], null, [4, 5, 6]], [[7, 8, 9], [10, 11, 12]],
        [null, [0.5, -0.5, 0], [1, 1, 1], [2, 2, 2]]],
  list: [new List(new Field('item', new Int32(), true)),
         [[1, 2], [], null], [[3], [4, 5, 6]],
         [null, [7], [8, 9], []]],
  large_list: [new LargeList(new Field('item', new Int16(), true)),
               [[1], null, [2, 3, 4]], [[], [5]],
               [[6, 7], null, [], [8]]],
  audio: [audioType,
          [{ bytes: bytes(82, 73, 70, 70), path: 'a.wav' }, null,
           { bytes: null, path: 'c.wav' }],
          [{ bytes: bytes(1), path: null }, { bytes: bytes(), path: 'e.wav' }],
          [{ bytes: bytes(2, 3), path: 'f.wav' }, null,
           { bytes: bytes(4), path: 'g.wav' }, { bytes: bytes(5), path: 'h' }]],
};

const batchCount = 3;
const batches = [];
for (let b = 0; b < batchCount; ++b) {
  const vectors = {};
  for (const [name, [type, ...rows]] of Object.entries(columns)) {
    vectors[name] = vectorFromArray(rows[b], type);
  }
  batches.push(...new Table(vectors).batches);
}
const table = new Table(batches);
writeFileSync(join(outDir, 'reference.arrow'), tableToIPC(table, 'file'));
writeFileSync(join(outDir, 'reference.arrows'), tableToIPC(table, 'stream'));

const toJson = (value) => {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return Array.from(value);
  if (Array.isArray(value)) return value.map(toJson);
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  }
  return value;
};
const expected = { batch_rows: [], columns: {} };
for (let b = 0; b < batchCount; ++b) {
  expected.batch_rows.push(columns.i8[b + 1].length);
}
for (const [name, [, ...rows]] of Object.entries(columns)) {
  expected.columns[name] = rows.flat(1).map(toJson);
}
writeFileSync(join(outDir, 'expected.json'), JSON.stringify(expected));

// One unsupported feature per file, as the JavaScript library writes it.
const writeOne = (file, name, vector) => writeFileSync(
  join(outDir, file), tableToIPC(new Table({ [name]: vector }), 'stream'));
writeOne('dictionary.arrows', 'label',
         vectorFromArray(['cat', 'dog', 'cat'],
                         new Dictionary(new Utf8(), new Int32())));
writeOne('timestamp.arrows', 'when',
         vectorFromArray([new Date(0), new Date(1000)],
                         new TimestampMillisecond()));
writeOne('decimal.arrows', 'price',
         vectorFromArray([new Uint32Array([1, 0, 0, 0])], new Decimal(2, 10, 128)));
