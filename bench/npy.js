// Minimal .npy reading and writing for bench/ort_runner.js: little-endian,
// C order, the dtypes the bench models use.
'use strict';
const TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
  '|b1': ['bool', Uint8Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array],
};

function readNpy(buf) {
  if (buf.length < 10 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error('not a .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) throw new Error(`bad .npy header: ${header}`);
  if (order[1] === 'True') throw new Error('Fortran order is not supported');
  const t = TYPES[descr[1]];
  if (!t) throw new Error(`dtype ${descr[1]} is not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  const start = hstart + hlen;
  const bytes = n * t[1].BYTES_PER_ELEMENT;
  if (buf.length < start + bytes) throw new Error('truncated .npy data');
  const copy = new Uint8Array(bytes);
  copy.set(buf.subarray(start, start + bytes)); // aligned copy
  const data = t[0] === 'bool' ? copy : new t[1](copy.buffer);
  return { type: t[0], data, shape: dims };
}

function writeNpy(tensor) {
  const descr = Object.keys(TYPES).find((k) => TYPES[k][0] === tensor.type);
  if (!descr) throw new Error(`dtype ${tensor.type} is not supported`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const d = tensor.data;
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(d.buffer, d.byteOffset, d.byteLength)]);
}

module.exports = { readNpy, writeNpy };
