/**
 * Just enough of the ONNX protobuf format to count a graph's arithmetic (read) and to build a
 * one-node model for a matrix-multiply microbenchmark (write). Field numbers from onnx/onnx.proto.
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
  let v = BigInt(x);
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

/** ONNX element types used here. */
export const ONNX_FLOAT = 1;
export const ONNX_UINT8 = 2;
export const ONNX_INT8 = 3;
export const ONNX_INT32 = 6;

function valueInfo(name: string, elem: number, shape: number[]): Uint8Array {
  const dims = shape.map((d) => bfield(1, concat([vfield(1, d)])));
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
