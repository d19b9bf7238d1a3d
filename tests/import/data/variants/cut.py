#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cut a small extract from a public trace-event JSON file, keeping each selected event's
text byte for byte (README.md lists the sources and the exact command for each extract).

    python3 cut.py SOURCE.json[.gz] OUT.json [--corr N,N,...] [--launch-name REGEX]
                   [--launches K] [--gpu-per-launch M] [--keep-cat CAT:COUNT ...]

Selected: the launch events (cuda_runtime / cuda_driver / Runtime with a correlation)
whose correlation is in --corr, or whose name matches --launch-name (the first --launches
of them, in file order); the GPU events of those correlations (at most --gpu-per-launch
each); every op (cpu_op / user_annotation / Operator) that holds a selected launch on its
thread, or whose External id a selected event names; the flow events of the selected
correlations (at most --gpu-per-launch of each phase); every metadata ("M") event; and the first COUNT events of each --keep-cat.
Not run by the tests: the extracts are committed, this records how they were made.
"""
import argparse, gzip, json, re

OPS = {'cpu_op', 'user_annotation', 'Operator'}
LAUNCHES = {'cuda_runtime', 'cuda_driver', 'Runtime'}
GPU = {'kernel', 'gpu_memcpy', 'gpu_memset', 'Kernel', 'Memcpy', 'Memset'}


def raw_events(text):
    """(event dict, raw text) for each element of traceEvents, in file order."""
    dec = json.JSONDecoder()
    start = text.index('[', text.index('"traceEvents"'))
    i = start + 1
    out = []
    while True:
        while text[i] in ' \t\r\n,':
            i += 1
        if text[i] == ']':
            return out
        obj, end = dec.raw_decode(text, i)
        out.append((obj, text[i:end]))
        i = end


def ext_of(a):
    v = a.get('External id', a.get('external id'))
    return v if isinstance(v, int) and v else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('source')
    ap.add_argument('out')
    ap.add_argument('--corr', default='')
    ap.add_argument('--launch-name', default=None)
    ap.add_argument('--launches', type=int, default=10)
    ap.add_argument('--gpu-per-launch', type=int, default=1000000)
    ap.add_argument('--keep-cat', action='append', default=[])
    a = ap.parse_args()
    op = gzip.open if a.source.endswith('.gz') else open
    with op(a.source, 'rt') as f:
        evs = raw_events(f.read())
    corrs = {int(c) for c in a.corr.split(',') if c}
    launches = []
    for e, _ in evs:
        args = e.get('args', {})
        if e.get('cat') in LAUNCHES and 'correlation' in args:
            if args['correlation'] in corrs or (a.launch_name and re.search(a.launch_name, e.get('name', ''))
                                                and len(launches) < a.launches):
                launches.append(e)
    sel = {id(e) for e in launches}
    sel_corr = {e['args']['correlation'] for e in launches}
    exts = {ext_of(e.get('args', {})) for e in launches}
    per = {}
    for e, _ in evs:
        c = e.get('args', {}).get('correlation')
        if e.get('cat') in GPU and c in sel_corr and per.get(c, 0) < a.gpu_per_launch:
            per[c] = per.get(c, 0) + 1
            sel.add(id(e))
            exts.add(ext_of(e.get('args', {})))
    for e, _ in evs:
        if e.get('cat') in OPS and e.get('ph') == 'X':
            t0, t1 = e['ts'], e['ts'] + e.get('dur', 0)
            if ext_of(e.get('args', {})) in exts or any(
                    l['pid'] == e['pid'] and l['tid'] == e['tid'] and t0 <= l['ts'] <= t1 for l in launches):
                sel.add(id(e))
        elif e.get('ph') in ('s', 'f') and e.get('id') in sel_corr:
            k = ('flow', e['ph'], e['id'])
            if per.get(k, 0) < a.gpu_per_launch:
                per[k] = per.get(k, 0) + 1
                sel.add(id(e))
        elif e.get('ph') == 'M':
            sel.add(id(e))
    keep = {k.split(':')[0]: int(k.split(':')[1]) for k in a.keep_cat}
    for e, _ in evs:
        c = e.get('cat')
        if c in keep and keep[c] > 0:
            keep[c] -= 1
            sel.add(id(e))
    with open(a.out, 'w') as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        f.write(',\n'.join(raw for e, raw in evs if id(e) in sel))
        f.write('\n]}\n')


if __name__ == '__main__':
    main()
