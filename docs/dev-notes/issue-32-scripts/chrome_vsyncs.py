# Issue 32, items 2, 3, 5, 7: replays ChromeFrames.emit (today) and the plan's rule over one process of a
# Chrome JSON trace. Usage: python3 chrome_vsyncs.py TRACE PID HZ
# Per vsync (PipelineReporter 'b' slices at one ts): P presented (any PRESENTED_*), D dropped, I no update;
# S = NeedsBeginFrameChanged with needsBeginFrame 0. Intervals follow FrameInterval (n = round(d/E) when
# d >= 1.5 E; D = max(t, T) - t_prev).
import json, sys, collections
f, pid, hz = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]); R = 1 / hz
ev = json.load(open(f))['traceEvents']
vs = collections.defaultdict(set); stops = []
for e in ev:
    if e.get('pid') != pid: continue
    if e.get('name') == 'PipelineReporter' and e['ph'] in 'bBX':
        s = e['args']['chrome_frame_reporter']['state']
        vs[e['ts'] / 1e6].add({'STATE_PRESENTED_ALL': 'P', 'STATE_PRESENTED_PARTIAL': 'P', 'STATE_DROPPED': 'D', 'STATE_NO_UPDATE_DESIRED': 'I'}[s])
    if e.get('name') == 'NeedsBeginFrameChanged' and e['args']['data']['needsBeginFrame'] == 0: stops.append(e['ts'] / 1e6)
seq = sorted([(t, 'P' if 'P' in k else 'D' if 'D' in k else 'I') for t, k in vs.items()] + [(t, 'S') for t in stops])

def measure(ticks, count_first):
    o = dict(ticks=0, frames=0, first=0, dropped=0, hitch=0.0, dur=0.0, firstdur=0.0); prev = None; first = True
    for x in ticks:
        if x == 'BREAK': prev = None; continue
        t, T = x; T = T if T is not None else t + R; o['ticks'] += 1
        if prev is None: prev = (t, T); continue
        pt, pT = prev; E = pT - pt; d = t - pt
        n = max(1, round(d / E)) if d >= 1.5 * E else 1
        D = max(t, pT) - pt
        if first and not count_first: o['first'] += 1; o['firstdur'] += D
        else:
            o['frames'] += 1; o['dur'] += D; o['dropped'] += n - 1
            if n >= 2: o['hitch'] += t - pT
        first = False; prev = (t, T)
    return o

def today():  # ChromeFrames.emit: P is a tick; I or S break the sequence; D makes nothing
    ticks = []; paused = True
    for t, k in seq:
        if k == 'P': ticks.append((t, None)); paused = False
        elif k in 'IS':
            if not paused: ticks.append('BREAK')
            paused = True
    return ticks

def plan():
    # item 2: I breaks only if S comes before the next vsync that wants a frame; otherwise a P's target is
    #         that next wanting vsync (content at a lower cadence);
    # item 3: after a break, a first wanting vsync that dropped starts the run one vsync before it;
    # 3b:     a D followed by I closes the run with a tick at that I (the drop is measured).
    ticks = []; paused = True; last = None
    for i, (t, k) in enumerate(seq):
        if k == 'S':
            if not paused: ticks.append('BREAK')
            paused = True; last = k; continue
        if k == 'I':
            if not paused and last == 'D': ticks += [(t, None), 'BREAK']; paused = True
            last = k; continue
        if paused and k == 'D': ticks.append((t - R, t)); paused = False; last = k; continue
        last = k
        if k != 'P': continue
        nxt = next((t2 for t2, k2 in seq[i + 1:] if k2 in 'PDS'), None)
        nxt = nxt if nxt is not None and dict(seq).get(nxt) != 'S' and nxt - t <= 1.0 else None
        ticks.append((t, nxt)); paused = False
    return ticks

print(''.join(k for _, k in seq))
for name, tk, cf in [('today', today(), False), ('plan 2+3+3b', plan(), False), ('plan 2+3+3b+7', plan(), True)]:
    o = measure(tk, cf)
    print('%-14s ticks %d intervals %d first %d (%.1f ms) dropped %d hitch %.1f ms measured %.3f s'
          % (name, o['ticks'], o['frames'], o['first'], o['firstdur'] * 1e3, o['dropped'], o['hitch'] * 1e3, o['dur'] + o['firstdur']))
c = collections.Counter(k for _, k in seq); vt = [t for t, k in seq if k != 'S']
print('Chrome per vsync: presented %d dropped %d no-update %d; source span %.3f s' % (c['P'], c['D'], c['I'], vt[-1] - vt[0]))
