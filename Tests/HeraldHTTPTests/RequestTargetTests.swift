import Testing

@testable import HeraldHTTP

@Suite struct RequestTargetTests {
    @Test func anHTTPSURLSplitsIntoHostPortAuthorityAndPath() throws {
        let fcm = try #require(RequestTarget(url: "https://fcm.googleapis.com/v1/projects/p/messages:send"))
        #expect(fcm.host == "fcm.googleapis.com" && fcm.port == 443)
        #expect(fcm.authority == "fcm.googleapis.com" && fcm.path == "/v1/projects/p/messages:send")
        #expect(fcm.secure && fcm.origin == "https://fcm.googleapis.com:443")

        let cleartext = try #require(RequestTarget(url: "http://gateway.internal/fcm/send"))
        #expect(!cleartext.secure && cleartext.port == 80 && cleartext.origin == "http://gateway.internal:80")
        #expect(cleartext.path == "/fcm/send")

        let local = try #require(RequestTarget(url: "HTTPS://Example.COM:8443?x=1#top"))
        #expect(local.host == "example.com" && local.port == 8443)
        #expect(local.authority == "Example.COM:8443" && local.path == "/?x=1")

        let ipv6 = try #require(RequestTarget(url: "https://[::1]:9443/a/b?c=d#e"))
        #expect(ipv6.host == "::1" && ipv6.port == 9443 && ipv6.authority == "[::1]:9443" && ipv6.path == "/a/b?c=d")
        #expect(RequestTarget(url: "https://[::1]")?.port == 443)
    }

    @Test(arguments: [
        "ftp://example.com/", "https://", "https:///path", "http://", "httpss://example.com/", "https://user:secret@example.com/",
        "https://example.com:0/",
        "https://example.com:65536/", "https://example.com:port/", "https://[::1/", "https://[::1]x/", "example.com",
        "https:/example.com/", "https:example.com", "httpx://example.com/", "https://@example.com/"
    ])
    func whatItCannotCarryIsRefused(_ url: String) {
        #expect(RequestTarget(url: url) == nil)
    }

    @Test func requestHeadersGoOutLowercasedWithoutConnectionHeaders() throws {
        let target = try #require(RequestTarget(url: "https://api.push.apple.com/3/device/abc"))
        let request = HTTPRequest(
            method: "post", url: "https://api.push.apple.com/3/device/abc",
            headers: [("APNs-Topic", "com.example"), ("Connection", "close"), ("Host", "x"), ("Transfer-Encoding", "chunked"), (":path", "/evil")],
            body: Array("{}".utf8))
        let fields = H2Request.fields(of: request, target: target)
        #expect(fields.map(\.name) == [":method", ":scheme", ":authority", ":path", "apns-topic", "content-length"])
        let h2c = try #require(RequestTarget(url: "http://127.0.0.1:8080/x"))
        #expect(H2Request.fields(of: HTTPRequest(url: "http://127.0.0.1:8080/x"), target: h2c).first { $0.name == ":scheme" }?.value == "http")
        #expect(fields.map(\.value) == ["POST", "https", "api.push.apple.com", "/3/device/abc", "com.example", "2"])

        let get = H2Request.fields(of: HTTPRequest(url: "https://api.push.apple.com/3/device/abc"), target: target)
        #expect(!get.contains { $0.name == "content-length" })
        let stated = HTTPRequest(method: "PUT", url: "https://h/", headers: [("Content-Length", "2")], body: Array("{}".utf8))
        #expect(H2Request.fields(of: stated, target: target).filter { $0.name == "content-length" }.count == 1)
    }

    @Test func aProxyVariableSendsItsSchemeThroughLibcurl() {
        #expect(!HTTPClient.proxySet([:], secure: true))
        #expect(!HTTPClient.proxySet(["HTTPS_PROXY": "", "NO_PROXY": "*"], secure: true))
        #expect(HTTPClient.proxySet(["https_proxy": "http://proxy:3128"], secure: true))
        #expect(!HTTPClient.proxySet(["https_proxy": "http://proxy:3128"], secure: false))
        #expect(HTTPClient.proxySet(["HTTP_PROXY": "http://proxy:3128"], secure: false))
        #expect(HTTPClient.proxySet(["ALL_PROXY": "socks5://proxy"], secure: true))
        #expect(HTTPClient.proxySet(["all_proxy": "socks5://proxy"], secure: false))
    }
}
