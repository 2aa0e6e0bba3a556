# Issue 32, items 7 and 8. Usage: python3 presentmon_fps.py FILE APPLICATION HZ [PID]
# Per swap chain: displayed ticks (start + MsUntilDisplayed/DisplayLatency), Framescope's clamped average FPS
# (D = max(t, T) - t_prev, first interval apart) vs the span rate (N-1)/(t_last - t_first) and PresentMon's own
# 1000/mean(MsBetweenPresents); hz = the rate the reader infers (snapped median).
import csv, sys, statistics
f, app, hz = sys.argv[1], sys.argv[2], float(sys.argv[3]); R = 1/hz
rows = [r for r in csv.DictReader(open(f, encoding='utf-8-sig')) if r['Application'] == app and (len(sys.argv) < 5 or r['ProcessID'] == sys.argv[4])]
tcol = 'TimeInSeconds'; dcol = next(c for c in ('MsUntilDisplayed', 'msUntilDisplayed') if c in rows[0])
ticks = [float(r[tcol]) + float(r[dcol])/1000 for r in rows if r.get('Dropped', '0') != '1' and r[dcol] != 'NA']
bp = [float(r.get('MsBetweenPresents') or r.get('msBetweenPresents')) for r in rows[1:]]
def run(count_first):
    fr = 0; dur = 0; drop = 0
    for i in range(1, len(ticks)):
        pt, t = ticks[i-1], ticks[i]; d = t - pt; n = max(1, round(d/R)) if d >= 1.5*R else 1
        if i == 1 and not count_first: continue
        fr += 1; dur += max(t, pt + R) - pt; drop += n - 1
    return fr, dur, drop
for cf in (False, True):
    fr, dur, drop = run(cf); print('%s count_first=%s intervals %d dropped %d averageFPS %.3f' % (app, cf, fr, drop, fr/dur))
print('span rate %.3f  PresentMon 1000/mean(MsBetweenPresents) %.3f  first interval %.2f ms' % ((len(ticks)-1)/(ticks[-1]-ticks[0]), 1000/statistics.mean(bp), (ticks[1]-ticks[0])*1e3))
dc = [float(r['MsBetweenDisplayChange']) for r in rows if r.get('Dropped', '0') == '0' and 'MsBetweenDisplayChange' in r and float(r['MsBetweenDisplayChange']) > 0]
if dc: print('PresentMon displayed FPS 1000/mean(MsBetweenDisplayChange > 0) %.3f over %d rows' % (1000 / statistics.mean(dc), len(dc)))
