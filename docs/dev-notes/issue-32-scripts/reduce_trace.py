# Keeps only what Framescope's Chrome reader reads from a trace (PipelineReporter slices with their
# state and frame_type, BeginFrame, NeedsBeginFrameChanged, DrawFrame, DroppedFrame, process names),
# so that a recording made here fits in the repository as a test fixture.
# Usage: python3 reduce_trace.py IN.json OUT.json.gz
import gzip, json, sys
keep = {'PipelineReporter', 'BeginFrame', 'NeedsBeginFrameChanged', 'DrawFrame', 'DroppedFrame', 'process_name'}
data = json.load(open(sys.argv[1]))
events = data['traceEvents'] if isinstance(data, dict) else data
out = []
for e in events:
    name = e.get('name')
    if name not in keep: continue
    if name == 'PipelineReporter' and e.get('ph') not in ('b', 'B', 'X'): continue
    r = {k: e[k] for k in ('name', 'ph', 'pid', 'ts') if k in e}
    args = e.get('args') or {}
    if name == 'PipelineReporter':
        rep = args.get('frame_reporter') or args.get('chrome_frame_reporter') or {}
        r['args'] = {'frame_reporter': {k: rep[k] for k in ('state', 'frame_type', 'frame_sequence') if k in rep}}
    elif name == 'NeedsBeginFrameChanged':
        r['args'] = {'data': {'needsBeginFrame': (args.get('data') or {}).get('needsBeginFrame')}}
    elif name == 'process_name':
        r['args'] = {'name': args.get('name')}
    out.append(r)
with gzip.open(sys.argv[2], 'wt') as f:
    json.dump({'traceEvents': out}, f, separators=(',', ':'))
print(len(out), 'events')
