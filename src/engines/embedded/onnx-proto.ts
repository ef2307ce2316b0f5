/**
 * Just enough of the ONNX protobuf format (field numbers from onnx/onnx.proto) to read a graph's
 * nodes and weight shapes (bench:latency counts its arithmetic) and to write models: USE-lite
 * converted from its TF.js weights (use-onnx.ts) and one-node models for the matrix-multiply
 * microbenchmark.
 */

// ---------------------------------------------------------------- reading

interface Field {
  no: number;
  wire: number;
  value: bigint | Uint8Array;
}

function* fields(buf: Uint8Array): Generator<Field> {
  let i = 0;
  const varint = (): bigint => {
    let x = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++] ?? 0;
      x |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return x;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) yield { no, wire, value: varint() };
    else if (wire === 2) {
      const len = Number(varint());
      yield { no, wire, value: buf.subarray(i, i + len) };
      i += len;
    } else if (wire === 5) {
      yield { no, wire, value: buf.subarray(i, i + 4) };
      i += 4;
    } else if (wire === 1) {
      yield { no, wire, value: buf.subarray(i, i + 8) };
      i += 8;
    } else throw new Error(`onnx: unsupported wire type ${wire}`);
  }
}

const text = (v: bigint | Uint8Array) => (typeof v === 'bigint' ? '' : new TextDecoder().decode(v));

export interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
}

export interface OnnxGraph {
  nodes: OnnxNode[];
  /** Initializer (weight) shapes by name. */
  initializers: Map<string, number[]>;
}

/** The nodes and initializer shapes of an ONNX model's main graph. */
export function readOnnxGraph(bytes: Uint8Array): OnnxGraph {
  const nodes: OnnxNode[] = [];
  const initializers = new Map<string, number[]>();
  for (const m of fields(bytes)) {
    if (m.no !== 7 || typeof m.value === 'bigint') continue; // ModelProto.graph
    for (const g of fields(m.value)) {
      if (typeof g.value === 'bigint') continue;
      if (g.no === 1) {
        const node: OnnxNode = { op: '', inputs: [], outputs: [] };
        for (const f of fields(g.value)) {
          if (f.no === 1) node.inputs.push(text(f.value));
          else if (f.no === 2) node.outputs.push(text(f.value));
          else if (f.no === 4) node.op = text(f.value);
        }
        nodes.push(node);
      } else if (g.no === 5) {
        const dims: number[] = [];
        let name = '';
        for (const f of fields(g.value)) {
          if (f.no === 1 && typeof f.value === 'bigint') dims.push(Number(f.value));
          else if (f.no === 1 && f.wire === 2)
            for (const d of fields(packedVarints(f.value))) dims.push(Number(d.value));
          else if (f.no === 8) name = text(f.value);
        }
        initializers.set(name, dims);
      }
    }
  }
  return { nodes, initializers };
}

/** Packed varints re-keyed as field 1 so that fields() can walk them. */
function packedVarints(v: bigint | Uint8Array): Uint8Array {
  if (typeof v === 'bigint') return new Uint8Array();
  const out: number[] = [];
  let start = true;
  for (const b of v) {
    if (start) out.push(0x08);
    out.push(b);
    start = b < 0x80;
  }
  return Uint8Array.from(out);
}

// ---------------------------------------------------------------- writing

function varintBytes(x: number | bigint): number[] {
  // negative numbers as 64-bit two's complement, as protobuf encodes int64
  let v = BigInt.asUintN(64, BigInt(x));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}

type Part = number[] | Uint8Array;
const concat = (parts: Part[]) => {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const vfield = (no: number, x: number | bigint): Part => [...varintBytes(no << 3), ...varintBytes(x)];
const bfield = (no: number, bytes: Uint8Array | string): Part => {
  const b = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
  return concat([varintBytes((no << 3) | 2), varintBytes(b.length), b]);
};

export type Attribute = { name: string } & ({ int: number } | { float: number } | { ints: number[] });

function attribute(a: Attribute): Uint8Array {
  if ('int' in a) return concat([bfield(1, a.name), vfield(20, 2), vfield(3, a.int)]);
  if ('float' in a) {
    const f = new Uint8Array(new Float32Array([a.float]).buffer);
    return concat([bfield(1, a.name), vfield(20, 1), [(2 << 3) | 5], f]);
  }
  return concat([bfield(1, a.name), vfield(20, 7), ...a.ints.map((i) => vfield(8, i))]);
}

export interface GraphSpec {
  /** A node of `domain` (e.g. 'com.microsoft' for onnxruntime's contrib ops) needs that domain in `opsets`. */
  nodes: { op: string; inputs: string[]; outputs: string[]; attributes?: Attribute[]; domain?: string }[];
  initializers: { name: string; dims: number[]; data: Float32Array | Int32Array | BigInt64Array | Int8Array }[];
  /** Inputs and outputs: name, element type, shape (a string is a symbolic dimension). */
  inputs: { name: string; elem: number; shape: (number | string)[] }[];
  outputs: { name: string; elem: number; shape: (number | string)[] }[];
  opset: number;
  /** Further operator sets by domain, e.g. { 'com.microsoft': 1 }. */
  opsets?: Record<string, number>;
}

/** A model (ModelProto bytes) of one graph. */
export function writeModel(spec: GraphSpec): Uint8Array {
  const parts: Part[] = [];
  spec.nodes.forEach((n, i) => {
    parts.push(
      bfield(
        1,
        concat([
          ...n.inputs.map((x) => bfield(1, x)),
          ...n.outputs.map((x) => bfield(2, x)),
          bfield(3, `n${i}`),
          bfield(4, n.op),
          ...(n.attributes ?? []).map((a) => bfield(5, attribute(a))),
          ...(n.domain ? [bfield(7, n.domain)] : []),
        ]),
      ),
    );
  });
  parts.push(bfield(2, 'graph'));
  for (const t of spec.initializers) {
    const elem =
      t.data instanceof Float32Array
        ? ONNX_FLOAT
        : t.data instanceof Int32Array
          ? ONNX_INT32
          : t.data instanceof BigInt64Array
            ? ONNX_INT64
            : ONNX_INT8;
    const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    parts.push(
      bfield(5, concat([...t.dims.map((d) => vfield(1, d)), vfield(2, elem), bfield(8, t.name), bfield(9, bytes)])),
    );
  }
  for (const v of spec.inputs) parts.push(bfield(11, valueInfo(v.name, v.elem, v.shape)));
  for (const v of spec.outputs) parts.push(bfield(12, valueInfo(v.name, v.elem, v.shape)));
  const opsets = [
    bfield(8, concat([bfield(1, ''), vfield(2, spec.opset)])),
    ...Object.entries(spec.opsets ?? {}).map(([domain, version]) =>
      bfield(8, concat([bfield(1, domain), vfield(2, version)])),
    ),
  ];
  return concat([vfield(1, 8), ...opsets, bfield(7, concat(parts))]);
}

/** ONNX element types used here. */
export const ONNX_FLOAT = 1;
export const ONNX_UINT8 = 2;
export const ONNX_INT8 = 3;
export const ONNX_INT32 = 6;
export const ONNX_INT64 = 7;

function valueInfo(name: string, elem: number, shape: (number | string)[]): Uint8Array {
  const dims = shape.map((d) => bfield(1, concat([typeof d === 'number' ? vfield(1, d) : bfield(2, d)])));
  const tensorType = concat([vfield(1, elem), bfield(2, concat(dims))]);
  return concat([bfield(1, name), bfield(2, concat([bfield(1, tensorType)]))]);
}

/**
 * A model of one node computing Y = A x B with B a constant [k, n] weight: `MatMul` (float32) or
 * `MatMulInteger` (A uint8, B int8, Y int32, as dynamically quantized models run it).
 */
export function matMulModel(kind: 'float32' | 'int8', m: number, k: number, n: number): Uint8Array {
  const int8 = kind === 'int8';
  const weight = int8
    ? new Int8Array(k * n).map((_, i) => ((i * 37) % 255) - 127)
    : new Float32Array(k * n).map((_, i) => Math.sin(i));
  const tensor = concat([
    vfield(1, k),
    vfield(1, n),
    vfield(2, int8 ? ONNX_INT8 : ONNX_FLOAT),
    bfield(8, 'B'),
    bfield(9, new Uint8Array(weight.buffer)),
  ]);
  const node = concat([
    bfield(1, 'A'),
    bfield(1, 'B'),
    bfield(2, 'Y'),
    bfield(3, 'mm'),
    bfield(4, int8 ? 'MatMulInteger' : 'MatMul'),
  ]);
  const graph = concat([
    bfield(1, node),
    bfield(2, 'bench'),
    bfield(5, tensor),
    bfield(11, valueInfo('A', int8 ? ONNX_UINT8 : ONNX_FLOAT, [m, k])),
    bfield(12, valueInfo('Y', int8 ? ONNX_INT32 : ONNX_FLOAT, [m, n])),
  ]);
  const opset = concat([bfield(1, ''), vfield(2, 13)]);
  return concat([vfield(1, 8), bfield(8, opset), bfield(7, graph)]);
}
