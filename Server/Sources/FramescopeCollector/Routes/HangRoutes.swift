import Foundation
import FramescopeCore
import Hummingbird

/// The hang routes, under `/v1/apps/{app}`:
/// - `GET …/hangs` with the read key: the app's hangs grouped by their dominant app frame,
///   symbolicated where the build's symbols were uploaded (``HangsResponse``). Parameters:
///   `from`, `to` and the filters of every read route (``screenQuery(_:now:)``),
///   `tag.KEY=VALUE` on the visit's tags (up to 8, as the export), and `limit` (groups
///   per source, 1–1000, default 100).
/// - `POST …/symbols` with the admin key: a build's symbol tables (``SymbolUpload``, JSON,
///   gzip allowed: 16 MiB as sent, 64 MiB inflated) → 201 with what was stored;
/// - `GET …/symbols` with the read or admin key: the images with symbols (``SymbolImagesResponse``).
struct HangRoutes: Sendable {
    let store: any AppAccess & SymbolStore
    /// The reads (``CollectorQueries/hangs(app:query:limit:)``) and their symbol cache, which
    /// an upload here empties for its app.
    let queries: CollectorQueries
    let clock: @Sendable () -> Double
    /// Upload bodies: 128 MiB at once over all uploads, at the ingest pace.
    let uploads: BodyReader

    init(store: any AppAccess & SymbolStore, queries: CollectorQueries, pace: BodyPace, clock: @escaping @Sendable () -> Double) {
        self.store = store
        self.queries = queries
        self.clock = clock
        uploads = BodyReader(maximumBodyBytes: SymbolUpload.maximumBodyBytes, maximumDecompressedBytes: SymbolUpload.maximumDecompressedBytes,
                             budget: ByteBudget(capacity: 128 << 20), pace: pace)
    }

    func addRoutes(to router: Router<CollectorRequestContext>) {
        let read = router.group("/v1/apps/:app").add(middleware: ReadKeyAuthenticator(store: store, clock: clock))
        read.get("hangs") { request, context -> HangsResponse in
            let app = try context.authenticatedApp()
            let parameters = request.uri.queryParameters
            let query = try eventQuery(parameters, now: clock())
            let limit = try integerParameter(parameters, name: "limit", default: HangsResponse.defaultLimit, range: 1...HangsResponse.maximumLimit)
            return try await queries.hangs(app: app, query: query, limit: limit)
        }
        router.group("/v1/apps/:app")
            .add(middleware: AppKeyAuthenticator(store: store, kinds: [.read, .admin], clock: clock))
            .get("symbols") { _, context -> SymbolImagesResponse in
                SymbolImagesResponse(images: try await store.symbolImages(app: try context.authenticatedApp()))
            }
        router.group("/v1/apps/:app")
            .add(middleware: AppKeyAuthenticator(store: store, kinds: [.admin], clock: clock))
            .post("symbols") { request, context -> Response in
                let app = try context.authenticatedApp()
                let images = try await uploads.withBody(of: request) { body in try SymbolUpload.decode(body).images }
                let now = clock()
                let stored = SymbolImagesResponse(images: images.map {
                    SymbolImageRecord(id: $0.id, name: $0.name, arch: $0.arch, symbols: $0.symbols.count, uploadedAt: ISO8601.format(unixSeconds: now))
                }.sorted { (StoredText($0.name), $0.id) < (StoredText($1.name), $1.id) })
                // Handed over, not copied: the store lets the symbols go once they are encoded,
                // before it writes (docs/benchmarks.md, "Symbol uploads").
                try await store.storeSymbols(app: app, images: consume images, now: now)
                await queries.symbols.forget(app: app)
                return try stored.response(from: request, context: context, status: .created)
            }
    }
}

/// `{"images": [...]}`: images with uploaded symbols.
public struct SymbolImagesResponse: ResponseEncodable, Codable, Sendable, Hashable {
    /// The images, by name then id.
    public var images: [SymbolImageRecord]

    /// The answer for `images`.
    public init(images: [SymbolImageRecord]) {
        self.images = images
    }

    /// The response with `status`.
    func response(from request: Request, context: CollectorRequestContext, status: HTTPResponse.Status) throws -> Response {
        var response = try self.response(from: request, context: context)
        response.status = status
        return response
    }
}

extension SymbolUpload {
    /// The upload in `body`, normalised (ids lowercase without dashes, names in NFC) and
    /// checked: 400 `invalid_json` or `invalid_field` naming the field.
    static func decode(_ body: ByteBuffer) throws -> SymbolUpload {
        // Read in place (``scan(_:)``): no copy of the body, no map of its values.
        var upload = try body.withUnsafeReadableBytes { bytes in try SymbolUpload.scan(bytes) }
        // One form, as a hang's images: ids in lowercase without dashes, names in NFC.
        for index in upload.images.indices {
            upload.images[index].id = HangStack.normalizedImageID(upload.images[index].id)
            upload.images[index].name = CanonicalText.nfc(upload.images[index].name)
        }
        if let (field, message) = upload.problem() {
            throw CollectorError(.badRequest, .invalidField, field: field, message: message)
        }
        return upload
    }
}
