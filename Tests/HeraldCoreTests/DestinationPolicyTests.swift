import Foundation
import HeraldCore
import Testing

/// Where a tenant's webhook may send (docs/webhooks.md).
@Suite struct DestinationPolicyTests {
    @Test(arguments: [
        ("127.0.0.1", IPAddress.Range.loopback), ("127.8.9.10", .loopback), ("::1", .loopback), ("[::1]", .loopback),
        ("10.1.2.3", .private), ("172.16.0.1", .private), ("172.31.255.255", .private), ("192.168.1.1", .private),
        ("100.64.0.1", .private), ("fd12:3456::1", .private), ("fc00::1", .private),
        ("169.254.1.1", .linkLocal), ("fe80::1", .linkLocal),
        ("169.254.169.254", .metadata), ("fd00:ec2::254", .metadata), ("168.63.129.16", .metadata), ("100.100.100.200", .metadata),
        ("::ffff:10.0.0.1", .private), ("::ffff:169.254.169.254", .metadata), ("64:ff9b::7f00:1", .loopback),
        ("0.0.0.0", .reserved), ("::", .reserved), ("224.0.0.1", .reserved), ("255.255.255.255", .reserved), ("ff02::1", .reserved),
        ("192.0.2.10", .reserved), ("2001:db8::1", .reserved),
        ("93.184.216.34", .public), ("172.32.0.1", .public), ("2606:4700:4700::1111", .public), ("::ffff:8.8.8.8", .public),
        // IPv6 that carries IPv4, judged by what it carries; ranges no webhook goes through.
        ("::127.0.0.1", .loopback), ("::ffff:0:7f00:1", .loopback), ("2002:7f00:1::", .loopback), ("2002:a9fe:a9fe::1", .metadata),
        ("2002:5db8:d822::1", .public), ("fec0::1", .private), ("64:ff9b:1::a9fe:a9fe", .reserved), ("2001:0:4136:e378::1", .reserved),
        ("100::1", .reserved)
    ])
    func everyAddressLiesInItsRange(_ text: String, _ range: IPAddress.Range) throws {
        #expect(try #require(IPAddress(text)).range == range)
    }

    @Test func refusedUnlessTheOperatorAllowsThemAndMetadataNever() throws {
        let strict = DestinationPolicy(.webhooks)
        let inside = DestinationPolicy(.webhooks, allowPrivate: true)
        for text in ["127.0.0.1", "10.0.0.1", "fe80::1", "::ffff:192.168.0.1"] {
            let address = try #require(IPAddress(text))
            #expect(strict.refusal(connectingTo: address)?.contains("HERALD_WEBHOOK_ALLOW_PRIVATE") == true, "\(text)")
            #expect(inside.refusal(connectingTo: address) == nil, "\(text)")
        }
        for text in ["169.254.169.254", "fd00:ec2::254", "0.0.0.0"] {
            #expect(inside.refusal(connectingTo: try #require(IPAddress(text))) != nil, "\(text)")
        }
        #expect(strict.refusal(connectingTo: try #require(IPAddress("93.184.216.34"))) == nil)
        #expect(IPAddress("example.com") == nil && IPAddress("1.2.3") == nil && IPAddress("") == nil)
    }

    @Test func urlsAreHTTPSWithAHostAndNothingHidden() throws {
        let strict = DestinationPolicy(.webhooks)
        #expect(try strict.url("https://hooks.example.com/herald?tenant=acme").host == "hooks.example.com")
        #expect(try strict.url("https://93.184.216.34:8443/in").port == 8443)
        for bad in [
            "http://hooks.example.com/in", "ftp://hooks.example.com", "https://", "hooks.example.com/in", "https://user:pw@hooks.example.com",
            "https://hooks.example.com/in#x", "https://127.0.0.1/in", "https://[::1]:8080/in", "https://169.254.169.254/latest/meta-data",
            "https://10.0.0.5/in", "https://example.com/" + String(repeating: "a", count: 2048), "not a url"
        ] {
            #expect(throws: InputError.self, "\(bad)") { try strict.url(bad) }
        }
        let tests = DestinationPolicy(.webhooks, allowHTTP: true, allowPrivate: true)
        #expect(try tests.url("http://127.0.0.1:9000/hook").port == 9000)
        #expect(throws: InputError.self) { try tests.url("http://169.254.169.254/") }
    }

    /// An address in any notation a connection reads it in is refused at registration (they
    /// were accepted, and refused only at connect time); a zone is no address.
    @Test(arguments: [
        "https://2130706433/", "https://0x7f000001/", "https://017700000001/", "https://0x7f.1/", "https://127.1/", "https://0/",
        "https://127.0.0.1./", "https://[fe80::1%25lo]/", "https://[::127.0.0.1]/", "https://[2002:7f00:1::]/", "https://[fec0::1]/",
        "https://[::ffff:0:7f00:1]/", "https://[64:ff9b:1::a9fe:a9fe]/", "https://0251.0376.0251.0376/"
    ])
    func anInsideAddressInAnyNotationIsRefused(url: String) {
        #expect(throws: InputError.self, "\(url)") { try DestinationPolicy(.webhooks).url(url) }
    }

    @Test func legacyIPv4NotationsAreReadAsTheCLibraryReadsThem() {
        #expect(IPAddress(urlHost: "127.1")?.description == "127.0.0.1")
        #expect(IPAddress(urlHost: "0x7f.1")?.description == "127.0.0.1")
        #expect(IPAddress(urlHost: "2130706433")?.description == "127.0.0.1")
        #expect(IPAddress(urlHost: "017700000001")?.description == "127.0.0.1")
        #expect(IPAddress(urlHost: "0")?.description == "0.0.0.0")
        #expect(IPAddress(urlHost: "hooks.example.com") == nil && IPAddress(urlHost: "deadbeef.example") == nil)
        #expect(IPAddress(urlHost: "[::1]")?.range == .loopback && IPAddress(urlHost: "[fe80::1%lo]") == nil)
    }

    /// Refuse what is not a URL as RFC 3986 writes it, and store what was given: a URL that
    /// grew when encoded broke the length check (a 500); CR, LF and NUL were encoded and stored;
    /// `%zz` was rewritten; ports 0 and 99999 were accepted.
    @Test func whatIsNotAURLAsWrittenIsRefused() throws {
        let strict = DestinationPolicy(.webhooks)
        for bad in [
            "https://hooks.example.com/" + String(repeating: "é", count: 1_000), "https://hooks.example.com/" + String(repeating: "^", count: 2_000),
            "https://hooks.example.com/a\rb", "https://hooks.example.com/a\nb", "https://hooks.example.com/a\u{0}b", "https://hooks.example.com/%zz",
            "https://hooks.example.com/a b", "https://hooks.example.com:0/", "https://hooks.example.com:99999/", "https://hooks.example.com/%4",
            "https://hook%73.example.com/"
        ] {
            #expect(throws: InputError.self, "\(bad.prefix(60))") { try strict.url(bad) }
        }
        let given = "https://hooks.example.com:8443/in/%E2%9C%93?tenant=acme&x=a%20b"
        #expect(try strict.url(given).absoluteString == given)
    }

    /// What passed registration and could never be connected to, then retried for 24 h (Web
    /// Push): a port past any integer, IPvFuture, empty labels, a number that is no IPv4
    /// address. Names that can be connected to still pass.
    @Test func aHostOrPortThatCannotBeConnectedToIsRefused() throws {
        let policy = DestinationPolicy(.webPush, allowHTTP: true, allowPrivate: true)
        for bad in [
            "https://push.example.com:99999999999999999999/x", "https://[v1.x]/x", "https://127.0.0.1../x", "https://4294967297/x",
            "https://push..example.com/x", "https://.example.com/x", "https://" + String(repeating: "a", count: 64) + ".example.com/x",
            "https://push.example.123/x", "https://push_.exa!mple.com/x"
        ] {
            #expect(throws: InputError.self, "\(bad)") { try policy.url(bad) }
        }
        for good in [
            "https://push.example.com./x", "https://fcm.googleapis.com/fcm/send/abc", "https://web.push.apple.com:443/x", "https://a-b_c.example/x",
            "https://123abc.example/x", "https://example.123abc/x", "https://127.0.0.1:8080/x", "https://[::1]/x", "https://push.example.com:/x"
        ] {
            #expect(throws: Never.self, "\(good)") { _ = try policy.url(good) }
        }
    }

    @Test func theOperatorsSwitchesAreReadStrictly() throws {
        #expect(try DestinationPolicy(.webhooks, environment: [:]) == DestinationPolicy(.webhooks))
        #expect(
            try DestinationPolicy(.webhooks, environment: ["HERALD_WEBHOOK_ALLOW_HTTP": "1", "HERALD_WEBHOOK_ALLOW_PRIVATE": "true"])
                == DestinationPolicy(.webhooks, allowHTTP: true, allowPrivate: true))
        #expect(throws: InputError.self) { try DestinationPolicy(.webhooks, environment: ["HERALD_WEBHOOK_ALLOW_PRIVATE": "yes"]) }
    }
}
