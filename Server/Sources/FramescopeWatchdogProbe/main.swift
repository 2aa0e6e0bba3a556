// Runs a hang watchdog on a queue for a while and prints what it sees, one line per
// event, so a test can stop and continue this process with signals and check that the
// stop was not taken for a hang.
//
//   FramescopeWatchdogProbe [--seconds S] [--work-ms M] [--block-at S --block-ms M]
//                           [--threshold S] [--interval S] [--main [--park-at S --park-ms M]]
//
// --seconds   how long to watch (default 4)
// --work-ms   the queue runs back-to-back chunks of this many ms, so a ping usually
//             waits (0: the queue is idle; default 100, below the threshold)
// --block-at  when to block the queue once, in seconds after the start (default: never)
// --block-ms  for how long to block it, in ms
// --threshold, --interval   the watchdog's configuration, in seconds
// --main      watch the main queue, drained by the main thread's run loop, and sample the
//             main thread's stack while a hang lasts (every 50 ms)
// --park-at   with --main: when to park the main thread in a run loop of a mode of its own
//             (the main queue waits, the thread waits for events: an idle "hang")
// --park-ms   for how long, in ms
//
// Output (stdout, one line each, written unbuffered):
//   ready pid=PID
//   began start=NS duration=S
//   ended start=NS duration=S ending=recovered|paused|stopped|suspended [samples=N idle=B]
//   done checks=N suspensions=N hangs=N sampled=N idle=N cpu=S wall=S
// Exit code 64 on bad arguments.

import Dispatch
import FramescopeSDK
import Foundation

func write(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FramescopeWatchdogProbe: \(message)\n".utf8))
    exit(64)
}

var options = ["--seconds": 4.0, "--work-ms": 100.0, "--threshold": 0.25, "--interval": 0.01]
var mainRequested = false
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    if name == "--main" {
        mainRequested = true
        continue
    }
    guard ["--seconds", "--work-ms", "--block-at", "--block-ms", "--threshold", "--interval", "--park-at",
           "--park-ms"].contains(name) else {
        fail("unknown option \(name)")
    }
    guard let text = arguments.popFirst(), let value = Double(text), value.isFinite, value >= 0 else {
        fail("\(name) needs a number ≥ 0")
    }
    options[name] = value
}
let seconds = options["--seconds", default: 4]
let workSeconds = options["--work-ms", default: 100] / 1000
let blockAt = options["--block-at"]
let blockSeconds = options["--block-ms", default: 0] / 1000
let parkAt = options["--park-at"]
let parkSeconds = options["--park-ms", default: 0] / 1000
let onMain = mainRequested
if parkAt != nil && !onMain { fail("--park-at needs --main") }

let queue = onMain ? DispatchQueue.main : DispatchQueue(label: "probe.watched")
let clock = MonotonicClock.system
let startTime = clock.now()
let endTime = startTime + UInt64(seconds * 1e9)

/// Runs one chunk of work on the queue and posts the next, until the end.
@Sendable func work() {
    Thread.sleep(forTimeInterval: workSeconds)
    if clock.now() < endTime { queue.async(execute: work) }
}

let configuration = HangWatchdog.Configuration(threshold: options["--threshold", default: 0.25],
                                               checkInterval: options["--interval", default: 0.01])
@Sendable func report(_ event: HangEvent) {
    switch event {
    case let .began(hang):
        write("began start=\(hang.start) duration=\(hang.duration)")
    case let .ended(hang, ending):
        let stack = onMain ? " samples=\(hang.stack?.samples.count ?? 0) idle=\(hang.isIdle)" : ""
        write("ended start=\(hang.start) duration=\(hang.duration) ending=\(ending)\(stack)")
    }
}
// With --main this runs on the main thread: the thread whose stack is sampled.
let watchdog = onMain
    ? HangWatchdog(watching: queue, configuration: configuration, stackSampleInterval: 0.05, handler: report)
    : HangWatchdog(watching: queue, configuration: configuration, handler: report)

watchdog.start()
if workSeconds > 0 { queue.async(execute: work) }
if let blockAt {
    queue.asyncAfter(deadline: .now() + blockAt) { Thread.sleep(forTimeInterval: blockSeconds) }
}
if let parkAt {
    queue.asyncAfter(deadline: .now() + parkAt) {
        // A nested run loop in a mode that does not serve the main queue, woken by a timer.
        let mode = RunLoop.Mode("probe.parked")
        let wake = Timer(fire: Date().addingTimeInterval(parkSeconds), interval: 0, repeats: false) { _ in }
        RunLoop.main.add(wake, forMode: mode)
        _ = RunLoop.main.run(mode: mode, before: Date().addingTimeInterval(parkSeconds + 0.1))
    }
}
write("ready pid=\(getpid())")

// Sleep (or, with --main, run the run loop) in short steps: a stop of the whole process
// (SIGSTOP) must not extend the run.
while clock.now() < endTime {
    if onMain {
        _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.05))
    } else {
        Thread.sleep(forTimeInterval: 0.05)
    }
}
watchdog.stop()

// CPU time of the whole process (all threads), user plus system.
var cpuTime = timespec()
clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpuTime)
let cpu = Double(cpuTime.tv_sec) + Double(cpuTime.tv_nsec) / 1e9
let statistics = watchdog.statistics
write("done checks=\(statistics.checks) suspensions=\(statistics.suspensions) hangs=\(statistics.hangs) "
      + "sampled=\(statistics.sampledHangs) idle=\(statistics.idleHangs) cpu=\(cpu) wall=\(Double(clock.now() - startTime) / 1e9)")
