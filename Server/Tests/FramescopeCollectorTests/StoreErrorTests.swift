@testable import FramescopeCollector
@testable import FramescopeSQLite
@testable import FramescopeStore
import GRDB
import Hummingbird
import Testing

/// `StoreError+Response.swift` is the one place store errors become HTTP answers; these are
/// the answers the stores gave before they threw domain errors (docs/collector-api.md's
/// error table), status, code, field, message and headers.
@Suite("Store errors: each case's HTTP answer")
struct StoreErrorTests {
    @Test("An app id that is taken is 409 app_exists naming the id")
    func appExists() {
        let answer = StoreError.appExists(id: "shop").collectorError
        #expect(answer.status == .conflict && answer.code == "app_exists" && answer.field == "id")
        #expect(answer.message == "an app with id 'shop' exists already (revoked apps keep their ids)")
        #expect(answer.headers.isEmpty)
    }

    @Test("A query the store cannot answer is 400 invalid_parameter naming the parameter")
    func invalidQuery() {
        let answer = StoreError.invalidQuery(field: "by", message: "group by one dimension or one tag, not both").collectorError
        #expect(answer.status == .badRequest && answer.code == "invalid_parameter" && answer.field == "by")
        #expect(answer.message == "group by one dimension or one tag, not both")
    }

    @Test("An event the store cannot keep is 400 invalid_event naming its field")
    func invalidEvent() {
        let answer = StoreError.invalidEvent(field: "events[2].startedAt", message: "is outside 1970–2106").collectorError
        #expect(answer.status == .badRequest && answer.code == "invalid_event" && answer.field == "events[2].startedAt")
        #expect(answer.message == "is outside 1970–2106")
    }

    @Test("A full store is 503 store_unavailable with Retry-After: 60")
    func full() {
        let answer = StoreError.full.collectorError
        #expect(answer.status == .serviceUnavailable && answer.code == "store_unavailable" && answer.field == nil)
        #expect(answer.message == "the collector's store is full (no space left for the database); send again later")
        #expect(answer.headers[.retryAfter] == "60")
    }

    @Test("An unreachable store is 503 store_unavailable with its Retry-After, naming the store")
    func unavailable() {
        let answer = StoreError.unavailable(store: "ClickHouse", retryAfter: 5).collectorError
        #expect(answer.status == .serviceUnavailable && answer.code == "store_unavailable")
        #expect(answer.message == "the collector's store (ClickHouse) cannot be reached; send again later")
        #expect(answer.headers[.retryAfter] == "5")
    }

    @Test("A store failure is a 500 store_error that says nothing more")
    func failed() {
        let answer = StoreError.failed.collectorError
        #expect(answer.status == .internalServerError && answer.code == "store_error" && answer.field == nil)
        #expect(answer.message == "the collector's store failed")
        #expect(answer.headers.isEmpty)
    }

    @Test("SQLITE_FULL is the full store; other SQLite errors stand for no store error")
    func sqlite() {
        #expect(StoreError(sqlite: DatabaseError(resultCode: .SQLITE_FULL)) == .full)
        #expect(StoreError(sqlite: DatabaseError(resultCode: .SQLITE_CONSTRAINT)) == nil)
    }
}
