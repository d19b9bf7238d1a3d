// decode.mjs OUT.json EXPECTED.json STDERR.txt REPORT.json
// decode.mjs OUT.json -
// Decodes every line of a lineage-validate --export-otlp file (or of the runtime's OTLP
// stream) with the OpenTelemetry project's generated OTLP protobuf code
// (@opentelemetry/otlp-transformer): fromObject, verify, binary encode and decode. Then
// checks the decoded spans against the counts the generator wrote from its own
// bookkeeping; with '-', only that every document decodes and every parent span id names a
// span of the same trace. Exit 0 on success, 1 on any mismatch.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const Req = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const [out, expectedPath, stderrPath, reportPath] = process.argv.slice(2);
const want = expectedPath === '-' ? {} : JSON.parse(readFileSync(expectedPath, 'utf8'));
let failed = 0;
function check(ok, what) {
  if (!ok) {
    console.log(`FAIL: ${what}`);
    failed++;
  }
}

// OTLP/JSON writes trace and span ids as hex (not base64, protobuf's JSON default).
const ID_LEN = { traceId: 16, spanId: 8, parentSpanId: 8 };
function hexIds(v) {
  if (Array.isArray(v)) return v.map(hexIds);
  if (v === null || typeof v !== 'object') return v;
  const o = {};
  for (const [k, x] of Object.entries(v)) {
    if (k in ID_LEN) {
      check(typeof x === 'string' && new RegExp(`^[0-9a-f]{${2 * ID_LEN[k]}}$`).test(x),
            `${k} ${x} is ${ID_LEN[k]} bytes of lowercase hex`);
      o[k] = Buffer.from(x, 'hex');
    } else {
      o[k] = hexIds(x);
    }
  }
  return o;
}
const hex = (b) => Buffer.from(b).toString('hex');
const attr = (list, key) => {
  const a = (list || []).find((x) => x.key === key);
  return a ? a.value : undefined;
};

const spans = [];
let docs = 0, links = 0, events = 0;
const resources = new Set();
for (const line of readFileSync(out, 'utf8').split('\n')) {
  if (!line) continue;
  docs++;
  const json = JSON.parse(line);
  const msg = Req.fromObject(hexIds(json));
  const err = Req.verify(msg);
  check(err === null, `document ${docs}: verify: ${err}`);
  const bytes = Req.encode(msg).finish();
  const back = Req.decode(bytes);
  for (const rs of back.resourceSpans) {
    const host = attr(rs.resource.attributes, 'host.name');
    const pid = attr(rs.resource.attributes, 'process.pid');
    check(host && pid, 'resource names host.name and process.pid');
    const res = `${host.stringValue}:${pid.intValue}`;
    resources.add(res);
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        check(s.traceId.length === 16 && s.spanId.length === 8, 'id lengths after decode');
        check(Number(s.startTimeUnixNano) <= Number(s.endTimeUnixNano), `span ${s.name}: start <= end`);
        links += s.links.length;
        events += s.events.length;
        spans.push({ s, res });
      }
    }
  }
  // what was decoded equals what was written, span by span
  const jsonSpans = json.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((x) => x.spans));
  const backSpans = back.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((x) => x.spans));
  check(jsonSpans.length === backSpans.length, `document ${docs}: span count survives decode`);
  jsonSpans.forEach((j, i) => {
    const b = backSpans[i];
    check(b && b.name === j.name && String(b.startTimeUnixNano) === j.startTimeUnixNano &&
          b.attributes.length === j.attributes.length, `span ${j.name}: fields survive decode`);
  });
}

const byId = new Map(spans.map((x) => [hex(x.s.traceId) + hex(x.s.spanId), x]));
let dangling = 0;
for (const { s } of spans) {
  if (s.parentSpanId && s.parentSpanId.length && !byId.has(hex(s.traceId) + hex(s.parentSpanId)))
    dangling++;
}
const kind = (s) => (attr(s.attributes, 'lineage.span') || {}).stringValue;
const gpu = spans.filter(({ s }) => ['kernel', 'memcpy', 'memset'].includes(kind(s)));
const cross = gpu.filter(({ s }) => (attr(s.attributes, 'lineage.cross_process') || {}).boolValue);
const lost = gpu.filter(({ s }) => s.status && s.status.code === 2);
const infer = spans.find(({ s }) => s.name === 'infer');

if (expectedPath === '-') { // decode only
  check(docs >= 1, 'at least one document');
  check(dangling === 0, `every parentSpanId names a span of the same trace (${dangling} do not)`);
  console.log(`otlp: documents=${docs} resources=${resources.size} spans=${spans.length} ` +
              `links=${links} events=${events} gpu=${gpu.length} failed_checks=${failed}`);
  process.exit(failed ? 1 : 0);
}

check(docs >= 1, 'at least one document');
check(resources.size === want.resources, `resources ${resources.size} == ${want.resources}`);
check(spans.length === want.spans, `spans ${spans.length} == ${want.spans}`);
check(links === want.links, `links ${links} == ${want.links}`);
check(events === want.events, `events ${events} == ${want.events}`);
check(gpu.length === want.gpu, `GPU spans ${gpu.length} == ${want.gpu}`);
check(dangling === 0, `every parentSpanId names a span of the same trace (${dangling} do not)`);
check(cross.length === want.cross_process_gpu,
      `cross-process GPU spans ${cross.length} == ${want.cross_process_gpu}`);
check(cross.every(({ s, res }) => hex(s.traceId) === want.remote_trace && res.startsWith('host-b')),
      'cross-process GPU spans run on host-b in the trace begun on host-a');
check(infer && hex(infer.s.traceId) === want.remote_trace &&
      hex(infer.s.parentSpanId) === want.remote_parent && infer.res.startsWith('host-b'),
      'the request begun on host-b keeps host-a\'s trace id and parent span');
const parent = infer && byId.get(hex(infer.s.traceId) + hex(infer.s.parentSpanId));
check(parent && parent.res.startsWith('host-a') && kind(parent.s) === 'epoch',
      'its parent is host-a\'s epoch span');
check(lost.length === 1 && lost[0].s.events.some((e) => e.name === 'lineage.lost' &&
      attr(e.attributes, 'lineage.cause')), 'one lost kernel: error status and a lineage.lost event with its cause');

const stats = readFileSync(stderrPath, 'utf8');
for (const k of ['spans', 'links', 'events', 'remote_requests', 'remote_joined', 'cross_process_gpu']) {
  const m = stats.match(new RegExp(`\\b${k}=(\\d+)`));
  check(m && Number(m[1]) === want[k], `stderr ${k}=${m && m[1]} == ${want[k]}`);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
check(report.gpu_records === want.gpu && report.lost === 1 && report.dropped === 5,
      `validator report: gpu_records ${report.gpu_records}, lost ${report.lost}, dropped ${report.dropped}`);

console.log(`otlp: documents=${docs} resources=${resources.size} spans=${spans.length} links=${links} ` +
            `events=${events} cross_process_gpu=${cross.length} failed_checks=${failed}`);
process.exit(failed ? 1 : 0);
