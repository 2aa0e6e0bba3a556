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
/// Every subcommand runs its body through ``CLIFailure/reporting(_:)``: the one
/// place where an error becomes a message and an exit code, so nothing ends as a
/// stack trace or as exit 1 (which means "budget failed").
struct CLIFailure: Error {
    /// Unusable input data (EX_DATAERR).
    static let dataError: Int32 = 65
    /// The input could not be read or the output written (EX_IOERR).
    static let ioError: Int32 = 74
    /// A budget or comparison failed.
    static let budgetFailed: Int32 = 1

    var exitCode: Int32
    var message: String

    init(exitCode: Int32, message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    init(_ error: TraceError) {
        self.init(exitCode: error.kind == .io ? Self.ioError : Self.dataError, message: error.description)
    }

    /// Runs `body`, turning every error into a message on stderr and an exit code.
    static func reporting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as CLIFailure {
            writeToStandardError("framescope: \(failure.message)\n")
            throw ExitCode(failure.exitCode)
        } catch let error as TraceError {
            writeToStandardError("framescope: \(error.description)\n")
            throw ExitCode(error.kind == .io ? ioError : dataError)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            writeToStandardError("framescope: \(error)\n")
            throw ExitCode(ioError)
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
