/// What a PresentMon CSV's header says: which column holds each value Framescope reads,
/// and the unit of its times. Columns are found by name, never by position, because every
/// PresentMon version and its derivatives (OCAT, CapFrameX) order and name them
/// differently (docs/traces.md).
struct PresentMonColumns {
    /// A value Framescope reads from each row.
    enum Role: Int, CaseIterable {
        case application, processID, swapChain, dropped, time, untilDisplayed, delta
    }

    /// How the start-time column counts time.
    enum TimeUnit: Equatable {
        case seconds
        case milliseconds
        /// Ticks of Windows' performance counter, whose frequency the file does not give.
        case performanceCounter
        /// `CPUStartTime`: seconds by default, milliseconds in PresentMon's millisecond
        /// time mode; the header is the same, so the rows tell.
        case secondsOrMilliseconds
    }

    /// Which of two frame-time columns relates consecutive start times.
    enum Delta: Equatable {
        /// `MsBetweenPresents`: this row's start minus the previous row's.
        case sincePrevious
        /// `FrameTime` (2.x `--v2_metrics`): the next row's start minus this row's.
        case untilNext
    }

    /// The role of each column, by position; `nil` for columns not read.
    let roles: [Role?]
    /// How many fields a row needs to hold every role.
    let neededFields: Int
    let timeUnit: TimeUnit
    let timeColumn: String
    let delta: Delta?
    /// Whether the display offset counts from the CPU's start of the frame
    /// (`DisplayLatency`) rather than from the present call (`MsUntilDisplayed`).
    let displayFromCPUStart: Bool

    /// Reads the header line (fields already split and unquoted).
    /// - Returns: the columns, or what is wrong with the header.
    static func parse(_ names: [String]) -> Result<PresentMonColumns, HeaderProblem> {
        var roles = [Role?](repeating: nil, count: names.count)
        var positions: [Role: Int] = [:]
        var timeUnit: TimeUnit?
        var timeColumn = ""
        var timeRank = Int.max
        var delta: Delta?
        var deltaPosition: Int?
        var displayFromCPUStart = false
        var displayRank = Int.max
        for (position, raw) in names.enumerated() {
            let name = raw.lowercased()
            switch name {
            case "application": positions[.application] = position
            case "processid": positions[.processID] = position
            case "swapchainaddress": positions[.swapChain] = position
            case "dropped": positions[.dropped] = position
            case "msbetweenpresents":
                delta = .sincePrevious; deltaPosition = position
            case "frametime" where delta == nil:
                delta = .untilNext; deltaPosition = position
            case "msuntildisplayed" where displayRank > 0:
                positions[.untilDisplayed] = position; displayRank = 0; displayFromCPUStart = false
            case "displaylatency" where displayRank > 1:
                positions[.untilDisplayed] = position; displayRank = 1; displayFromCPUStart = true
            case "timeindatetime", "cpustartdatetime":
                return .failure(.dateTimes(raw))
            default:
                // The start time: the present call's time is preferred to the CPU's start.
                if let (unit, rank) = Self.timeColumns[name], rank < timeRank {
                    timeUnit = unit; timeColumn = raw; timeRank = rank
                    positions[.time] = position
                }
            }
        }
        guard positions[.application] != nil else { return .failure(.missing("Application")) }
        guard let timeUnit else { return .failure(.missing("TimeInSeconds, TimeInMs, TimeInQPC or CPUStartTime")) }
        // A display offset must count from the start time the file gives.
        let fromPresent = timeRank < 10
        if positions[.untilDisplayed] != nil, displayFromCPUStart == fromPresent {
            positions[.untilDisplayed] = nil
        }
        if let deltaPosition, (delta == .sincePrevious) == fromPresent { positions[.delta] = deltaPosition } else { delta = nil }
        for (role, position) in positions { roles[position] = role }
        return .success(PresentMonColumns(
            roles: roles,
            neededFields: (positions.values.max() ?? 0) + 1,
            timeUnit: timeUnit,
            timeColumn: timeColumn,
            delta: positions[.delta] == nil ? nil : delta,
            displayFromCPUStart: displayFromCPUStart,
            hasDisplay: positions[.untilDisplayed] != nil,
            hasDropped: positions[.dropped] != nil,
            hasProcessID: positions[.processID] != nil,
            hasSwapChain: positions[.swapChain] != nil
        ))
    }

    /// Whether a display column was found that fits the start time.
    let hasDisplay: Bool
    /// Whether the file has a `Dropped` column (1.x and `--v1_metrics`).
    let hasDropped: Bool
    /// Whether the file has a `ProcessID` column.
    let hasProcessID: Bool
    /// Whether the file has a `SwapChainAddress` column.
    let hasSwapChain: Bool

    /// Start-time columns by lower-cased name: their unit, and a rank (lower is preferred;
    /// below 10, the present call's time; from 10, the CPU's start of the frame).
    private static let timeColumns: [String: (TimeUnit, Int)] = [
        "timeinseconds": (.seconds, 0),
        "timeinms": (.milliseconds, 1),
        "timeinqpc": (.performanceCounter, 2),
        "cpustarttimeinseconds": (.seconds, 10),
        "cpustarttimeinms": (.milliseconds, 11),
        "cpustartqpctimeinms": (.milliseconds, 12),
        "cpustartqpctime": (.milliseconds, 13),
        "cpustartqpc": (.performanceCounter, 14),
        "cpustarttime": (.secondsOrMilliseconds, 15),
    ]

    /// What is wrong with a header.
    enum HeaderProblem: Error {
        case missing(String)
        case dateTimes(String)

        var message: String {
            switch self {
            case let .missing(name): "the header has no \(name) column; is this a PresentMon CSV?"
            case let .dateTimes(name): "column \(name) holds dates (PresentMon's --date_time), which do not resolve a frame; record with the default time unit or --qpc_time"
            }
        }
    }
}
