# Issue 32: the plan's rule (chrome_vsyncs.py) on the two patterns, 120 Hz and 60 Hz vsyncs.
full = open(__file__.replace('synthetic.py', 'chrome_vsyncs.py')).read()
src = full[full.index('def measure'):full.index("print(''.join")]
for name, hz, pattern in [('60 fps content on 120 Hz', 120, 'S' + 'PI' * 205), ('idle then jank', 60, 'PSII' + 'D' * 14 + 'P')]:
    g = {'R': 1 / hz, 'seq': [(i / hz, k) for i, k in enumerate(pattern) if k != 'S'] + [(i / hz - 1e-4, 'S') for i, k in enumerate(pattern) if k == 'S']}
    g['seq'].sort(); exec(src, g)
    for rule in ('today', 'plan'):
        o = g['measure'](g[rule](), True)
        print('%-26s %-5s intervals %d dropped %d averageFPS %.2f measured %.3f s' % (name, rule, o['frames'], o['dropped'], o['frames'] / o['dur'] if o['dur'] else 0, o['dur']))
