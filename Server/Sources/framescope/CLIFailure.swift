import ArgumentParser
import FramescopeCore
import FramescopeTraces
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure the CLI reports on stderr with one of DESIGN §3's exit codes.
///
/// Commands throw it (or a ``TraceError``, or any other error) from `run`; the root
/// command's ``Framescope/main()`` hands every error to ``exitError(for:)``: the one
/// place where an error becomes a message and an exit code, for synchronous and
/// asynchronous commands alike, so nothing ends as a stack trace or as exit 1 (which
/// means "budget failed").
struct CLIFailure: Error {
    /// Unusable input data (EX_DATAERR).
    static let dataError: Int32 = 65
    /// The input could not be read, the output written, or a server reached (EX_IOERR).
    static let ioError: Int32 = 74
    /// A budget or comparison failed.
    static let budgetFailed: Int32 = 1
    /// Bad usage that only a server could judge (a filter value it refuses): ArgumentParser's code (EX_USAGE).
    static let usage: Int32 = 64

    /// The process's exit status: one of the codes above.
    var exitCode: Int32
    /// What went wrong and where, for stderr (without the `framescope: ` prefix).
    var message: String

    init(exitCode: Int32, message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    init(_ error: TraceError) {
        self.init(exitCode: error.kind == .io ? Self.ioError : Self.dataError, message: error.description)
    }

    /// The error to end the process with for `error` thrown by a command's `run`,
    /// after writing its message to stderr.
    ///
    /// ArgumentParser's own outcomes (an ``ExitCode``, a `ValidationError` with its usage
    /// line and exit 64, a clean exit) pass through; a ``CLIFailure`` or ``TraceError``
    /// brings its code; any other error (a socket, a database, a file system call) is an
    /// I/O failure, 74.
    static func exitError(for error: any Error) -> any Error {
        switch error {
        case let failure as CLIFailure:
            writeToStandardError("framescope: \(failure.message)\n")
            return ExitCode(failure.exitCode)
        case let error as TraceError:
            return exitError(for: CLIFailure(error))
        case is ExitCode, is ValidationError, is CleanExit:
            return error
        default:
            writeToStandardError("framescope: \(error)\n")
            return ExitCode(ioError)
        }
    }
}

/// Writes `text` to stderr unbuffered.
func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

/// Whether file descriptor `descriptor` is a terminal.
func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }
