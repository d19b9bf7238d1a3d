#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent reading of imported traces, used to derive the counts that
tests/import/real_traces.sh and tests/import/variants.sh assert. Not run by the tests
(CI needs no Python); run it by hand:

    python3 tests/import/reference.py ../shared/realtraces tests/import/data/variants

It reads the files with Python's own json/gzip/sqlite3 modules (times as exact decimals,
never through a float) and applies the rules of docs/importers.md by brute force (every
op of a thread scanned for every launch), sharing no code with the C importer. For each
file it prints the independent GPU record count (events of a GPU category, or rows of the
GPU tables) and the outcome of each record: observed, inferred:<rule>, lost:<cause>,
ambiguous:<cause>, and the join level reached.
"""
import collections, decimal, gzip, json, os, sqlite3, sys

OP_CATS = {'cpu_op', 'user_annotation', 'Operator'}
LAUNCH_CATS = {'cuda_runtime', 'cuda_driver', 'Runtime'}
GPU_CATS = {'kernel', 'gpu_memcpy', 'gpu_memset', 'Kernel', 'Memcpy', 'Memset'}


def enclosing(ops, l):
    enc = [o for o in ops if o['ts'] <= l['ts'] <= o['end']]
    return max(enc, key=lambda o: (o['ts'], -o['end'], o['i'])) if enc else None


def holds(o, l):
    return o['proc'] == l['proc'] and o['tid'] == l['tid'] and o['ts'] <= l['ts'] <= o['end']


def classify(gpus, launches, ops, per_file):
    """gpus: dicts(proc, corr, ext); launches: dicts(proc, tid, ts, end, corr, ext, graph);
    ops: dicts(proc, tid, ts, end, ext, i). Returns Counters of outcomes and of levels."""
    out, lev = collections.Counter(), collections.Counter()
    by_corr = collections.defaultdict(list)
    for l in launches:
        by_corr[l['corr']].append(l)
    min_corr = {}
    for l in launches:
        k = 'file' if per_file else l['proc']
        min_corr[k] = min(min_corr.get(k, l['corr']), l['corr'])
    ops_by_thread = collections.defaultdict(list)
    ops_procs = set()
    ext_op = {}
    for o in ops:
        ops_by_thread[(o['proc'], o['tid'])].append(o)
        ops_procs.add(o['proc'])
        if o.get('ext') is not None:
            ext_op.setdefault((o['proc'], o['ext']), o)

    def res(outcome, level):
        out[outcome] += 1
        lev[level] += 1

    for g in gpus:
        if g['corr'] is None:
            res('lost:no_correlation', 'none'); continue
        cands = [l for l in by_corr.get(g['corr'], []) if per_file or l['proc'] == g['proc']]
        if not cands:
            mc = min_corr.get('file' if per_file else g['proc'])
            res('lost:before_trace_start' if mc is not None and g['corr'] < mc
                else 'lost:no_api_record', 'none')
            continue
        if len({l['proc'] for l in cands}) > 1:
            res('ambiguous:correlation_collision', 'none'); continue
        if len({l['tid'] for l in cands}) > 1:
            res('ambiguous:correlation_on_two_threads', 'none'); continue
        l = min(cands, key=lambda x: (x['ts'], x['i']))
        graph = l['graph']
        if l['proc'] not in ops_procs:
            res('lost:no_op_layer', 'api_call'); continue
        if l['ext'] is not None and g.get('ext') is not None and l['ext'] != g['ext']:
            res('ambiguous:external_id_conflict', 'api_call'); continue
        cont = enclosing(ops_by_thread[(l['proc'], l['tid'])], l)
        ext = l['ext'] if l['ext'] is not None or graph else g.get('ext')
        x = ext_op.get((l['proc'], ext)) if ext is not None else None
        rule = 'graph_launch_enclosing_op' if graph else 'same_thread_time_containment'
        if ext is not None and ext == g['corr']:
            if x is not None and x is not cont and holds(x, l):
                res('ambiguous:external_id_is_correlation', 'api_call'); continue
            if x is not None and x is not cont and cont is not None and not graph:
                rule = 'external_id_is_correlation_fallback'
            x = None
        if x is not None and x['tid'] != l['tid']:
            res('ambiguous:external_id_other_thread', 'api_call'); continue
        if x is not None and not holds(x, l):
            res('ambiguous:external_id_outside_launch', 'api_call'); continue
        if x is not None:
            res('observed', 'op')
        elif cont is not None:
            res('inferred:' + rule, 'op')
        else:
            res('lost:graph_replay' if graph else 'lost:no_enclosing_op', 'api_call')
    return out, lev


def ns(us):
    """Decimal microseconds to integer ns, halves away from zero (exact)."""
    return int((decimal.Decimal(us) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def as_int(v):
    """pid/tid: an integer, or a string of digits (2020-21 Kineto)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and (v.isdigit() or (v[:1] == '-' and v[1:].isdigit())):
        return int(v)
    return None


def ext_of(a):
    v = a.get('External id', a.get('external id'))
    return v if isinstance(v, int) and v != 0 else None


def kineto(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    evs = doc['traceEvents'] if isinstance(doc, dict) else doc
    gpus, launches, ops = [], [], []
    gpu_count = 0
    for i, e in enumerate(evs):
        if not isinstance(e, dict):
            continue
        cat = e.get('cat')
        gpu_count += cat in GPU_CATS and e.get('ph') == 'X'
        if e.get('ph') != 'X' or 'ts' not in e:
            continue
        a = e.get('args', {})
        t0 = ns(e['ts'])
        d = ns(e.get('dur', 0))
        t1 = t0 + max(d, 0)
        pid, tid = as_int(e.get('pid')), as_int(e.get('tid'))
        hostok = pid is not None and pid >= 0 and tid is not None
        if cat in OP_CATS and hostok:
            ops.append(dict(proc=pid, tid=tid, ts=t0, end=t1, ext=ext_of(a), i=i))
        elif cat in LAUNCH_CATS and hostok and isinstance(a.get('correlation'), int):
            launches.append(dict(proc=pid, tid=tid, ts=t0, end=t1, corr=a['correlation'],
                                 ext=ext_of(a), graph='GraphLaunch' in e.get('name', ''), i=i))
        elif cat in GPU_CATS:
            c = a.get('correlation')
            gpus.append(dict(proc=None, corr=c if isinstance(c, int) else None, ext=ext_of(a)))
    out, lev = classify(gpus, launches, ops, True)
    return out, lev, gpu_count, len(evs)


def nsys(path):
    db = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    s = dict(db.execute('select id, value from StringIds')) if 'StringIds' in tables else {}
    gpus, launches, ops = [], [], []
    pid = lambda g: ((g or 0) >> 24) & 0xffffff
    gpu_count = 0
    for t in ('CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET'):
        if t in tables:
            gpu_count += db.execute('select count(*) from %s' % t).fetchone()[0]
            for corr, gp in db.execute('select correlationId, globalPid from %s' % t):
                gpus.append(dict(proc=pid(gp), corr=corr, ext=None))
    i = 0
    for t in ('CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_DRIVER'):
        if t not in tables:
            continue
        cols = [r[1] for r in db.execute('pragma table_info(%s)' % t)]
        namecol = 'name' if 'name' in cols else 'NULL'
        for st, en, gt, corr, nid, nm in db.execute(
                'select start, "end", globalTid, correlationId, nameId, %s from %s' % (namecol, t)):
            i += 1
            if corr is None:
                continue
            name = s.get(nid) or nm or ''
            launches.append(dict(proc=pid(gt), tid=gt & 0xffffff, ts=st, end=max(en, st), corr=corr,
                                 ext=None, graph='GraphLaunch' in name, i=i))
    if 'NVTX_EVENTS' in tables:
        for st, en, gt in db.execute('select start, "end", globalTid from NVTX_EVENTS '
                                     'where eventType in (59, 60) and "end" is not null'):
            i += 1
            ops.append(dict(proc=pid(gt), tid=gt & 0xffffff, ts=st, end=en, ext=None, i=i))
    out, lev = classify(gpus, launches, ops, False)
    return out, lev, gpu_count, None


def show(p):
    f = os.path.basename(p)
    if '.json' in f:
        out, lev, n, evs = kineto(p)
    elif f.endswith('.sqlite'):
        out, lev, n, evs = nsys(p)
    else:
        return
    print(f, 'gpu_records(counted)=%d' % n, 'classified=%d' % sum(out.values()),
          'events=%s' % evs, dict(sorted(out.items())), 'levels', dict(sorted(lev.items())))


if __name__ == '__main__':
    for a in sys.argv[1:]:
        for p in sorted(os.path.join(a, f) for f in os.listdir(a)) if os.path.isdir(a) else [a]:
            show(p)
