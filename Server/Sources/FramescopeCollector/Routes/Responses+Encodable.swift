import FramescopeStore
import Hummingbird

// The store's answers go out as JSON bodies (Hummingbird's `ResponseEncodable`: encoded with
// the request context's encoder); the values themselves know nothing of HTTP.
extension HangsResponse: ResponseEncodable {}
extension ScreensResponse: ResponseEncodable {}
