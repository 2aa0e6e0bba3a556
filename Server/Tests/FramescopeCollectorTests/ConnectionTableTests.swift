@testable import FramescopeCollector
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// The connection table's decisions, event by event, without a server.
@Suite("Connection table")
struct ConnectionTableTests {

    @Test("Below the limit nothing is closed; at it, the connection idle longest is, never one serving a request")
    func shedsLongestIdle() {
        var table = ConnectionTable<Int>(maximum: 3)
        let decision1 = table.opened(1)
        #expect(decision1 == nil)
        let decision2 = table.opened(2)
        #expect(decision2 == nil)
        table.requestStarted(1)          // 1 serves a request: never chosen
        let decision3 = table.opened(3)    // the third makes the limit: 2, idle since it opened, goes
        #expect(decision3 == 2)
        #expect(table.openCount == 2)
        table.closed(2)
        let decision4 = table.opened(4)    // 3 is now idle longest (1 is busy, 4 is the newcomer)
        #expect(decision4 == 3)
        table.closed(3)
        table.requestEnded(1, closeAfterResponse: false)
        _ = table.flushed(4)             // 4 answered something after 1 ended: 1 is idle longest
        let decision5 = table.opened(5)
        #expect(decision5 == 1)
        #expect(table.shed == 3)
    }

    @Test("When every other connection serves a request, none is closed (the server stops accepting instead)")
    func allBusy() {
        var table = ConnectionTable<Int>(maximum: 2)
        let decision6 = table.opened(1)
        #expect(decision6 == nil)
        table.requestStarted(1)
        let decision7 = table.opened(2)
        #expect(decision7 == nil)
        #expect(table.openCount == 2)
        #expect(table.shed == 0)
    }

    @Test("A connection already closing is not chosen twice and does not count as open")
    func closingNotCounted() {
        var table = ConnectionTable<Int>(maximum: 2)
        _ = table.opened(1)
        let decision8 = table.opened(2)
        #expect(decision8 == 1)
        #expect(table.openCount == 1)
        let decision9 = table.opened(3)    // 1 is closing already: 2 goes, not 1 again
        #expect(decision9 == 2)
        table.closed(1)
        table.closed(2)
        #expect(table.openCount == 1 && table.entries.count == 1)
    }

    @Test("A response that says Connection: close closes its connection at the flush after the request ended, once")
    func closeAfterResponse() {
        var table = ConnectionTable<Int>(maximum: 10)
        _ = table.opened(1)
        table.requestStarted(1)
        let decision10 = table.flushed(1)
        #expect(!decision10)
        table.requestEnded(1, closeAfterResponse: true)
        let decision11 = table.flushed(1)
        #expect(decision11)
        let decision12 = table.flushed(1)
        #expect(!decision12)
        _ = table.opened(2)
        table.requestStarted(2)
        table.requestEnded(2, closeAfterResponse: false)
        let decision13 = table.flushed(2)
        #expect(!decision13)
        let decision14 = table.flushed(99)
        #expect(!decision14)
    }

    @Test("The default connection limit is the descriptor limit less 128, at least 16 or half", arguments: [
        (1_024, 896), (20_000, 19_872), (200, 72), (100, 50), (0, 1),
    ])
    func defaultLimit(descriptors: Int, connections: Int) {
        #expect(ConnectionLimits.defaultMaximumConnections(descriptorLimit: descriptors) == connections)
    }
}
