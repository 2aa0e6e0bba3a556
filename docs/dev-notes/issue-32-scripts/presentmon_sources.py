# Issue 32, item 1: presents and displayed presents per swap chain of each corpus PresentMon file.
# Usage: python3 presentmon_sources.py ../../../../shared/corpus/presentmon/*.csv
import csv, sys, collections
for f in sys.argv[1:]:
    rows = list(csv.DictReader(open(f, encoding='utf-8-sig')))
    disp = next(c for c in ('MsUntilDisplayed', 'msUntilDisplayed', 'DisplayLatency') if c in rows[0])
    c = collections.OrderedDict()
    for r in rows:
        k = (r['Application'], r['ProcessID']); p, d = c.get(k, (0, 0))
        c[k] = (p + 1, d + (0 if r.get('Dropped') == '1' or r[disp] == 'NA' else 1))
    print(f.split('/')[-1] + ': ' + ' | '.join('%s %s %d/%d' % (a, pid, p, d) for (a, pid), (p, d) in c.items()))
