// Runs a hang watchdog on a queue for a while and prints what it sees, one line per
// event, so a test can stop and continue this process with signals and check that the
// stop was not taken for a hang.
//
//   FramescopeWatchdogProbe [--seconds S] [--work-ms M] [--block-at S --block-ms M]
//                           [--threshold S] [--interval S]
//
// --seconds   how long to watch (default 4)
// --work-ms   the queue runs back-to-back chunks of this many ms, so a ping usually
//             waits (0: the queue is idle; default 100, below the threshold)
// --block-at  when to block the queue once, in seconds after the start (default: never)
// --block-ms  for how long to block it, in ms
// --threshold, --interval   the watchdog's configuration, in seconds
//
// Output (stdout, one line each, written unbuffered):
//   ready pid=PID
//   began start=NS duration=S
//   ended start=NS duration=S ending=recovered|paused|stopped|suspended
//   done checks=N suspensions=N hangs=N cpu=S wall=S
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
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard ["--seconds", "--work-ms", "--block-at", "--block-ms", "--threshold", "--interval"].contains(name) else {
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

let queue = DispatchQueue(label: "probe.watched")
let clock = MonotonicClock.system
let startTime = clock.now()
let endTime = startTime + UInt64(seconds * 1e9)

/// Runs one chunk of work on the queue and posts the next, until the end.
@Sendable func work() {
    Thread.sleep(forTimeInterval: workSeconds)
    if clock.now() < endTime { queue.async(execute: work) }
}

let watchdog = HangWatchdog(
    watching: queue,
    configuration: HangWatchdog.Configuration(threshold: options["--threshold", default: 0.25],
                                              checkInterval: options["--interval", default: 0.01])
) { event in
    switch event {
    case let .began(hang):
        write("began start=\(hang.start) duration=\(hang.duration)")
    case let .ended(hang, ending):
        write("ended start=\(hang.start) duration=\(hang.duration) ending=\(ending)")
    }
}

watchdog.start()
if workSeconds > 0 { queue.async(execute: work) }
if let blockAt {
    queue.asyncAfter(deadline: .now() + blockAt) { Thread.sleep(forTimeInterval: blockSeconds) }
}
write("ready pid=\(getpid())")

// Sleep in short steps: a stop of the whole process (SIGSTOP) must not extend the run.
while clock.now() < endTime {
    Thread.sleep(forTimeInterval: 0.05)
}
watchdog.stop()

// CPU time of the whole process (all threads), user plus system.
var cpuTime = timespec()
clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpuTime)
let cpu = Double(cpuTime.tv_sec) + Double(cpuTime.tv_nsec) / 1e9
let statistics = watchdog.statistics
write("done checks=\(statistics.checks) suspensions=\(statistics.suspensions) hangs=\(statistics.hangs) cpu=\(cpu) wall=\(Double(clock.now() - startTime) / 1e9)")
