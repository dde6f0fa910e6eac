import Foundation
import HeraldCore
import HeraldWebhooks
import Testing

/// Where a tenant's webhook may send (DESIGN §18).
@Suite struct WebhookDestinationPolicyTests {
    @Test(arguments: [
        ("127.0.0.1", IPAddress.Range.loopback), ("127.8.9.10", .loopback), ("::1", .loopback), ("[::1]", .loopback),
        ("10.1.2.3", .private), ("172.16.0.1", .private), ("172.31.255.255", .private), ("192.168.1.1", .private),
        ("100.64.0.1", .private), ("fd12:3456::1", .private), ("fc00::1", .private),
        ("169.254.1.1", .linkLocal), ("fe80::1", .linkLocal),
        ("169.254.169.254", .metadata), ("fd00:ec2::254", .metadata), ("168.63.129.16", .metadata), ("100.100.100.200", .metadata),
        ("::ffff:10.0.0.1", .private), ("::ffff:169.254.169.254", .metadata), ("64:ff9b::7f00:1", .loopback),
        ("0.0.0.0", .reserved), ("::", .reserved), ("224.0.0.1", .reserved), ("255.255.255.255", .reserved), ("ff02::1", .reserved),
        ("192.0.2.10", .reserved), ("2001:db8::1", .reserved),
        ("93.184.216.34", .public), ("172.32.0.1", .public), ("2606:4700:4700::1111", .public), ("::ffff:8.8.8.8", .public)
    ])
    func everyAddressLiesInItsRange(_ text: String, _ range: IPAddress.Range) throws {
        #expect(try #require(IPAddress(text)).range == range)
    }

    @Test func refusedUnlessTheOperatorAllowsThemAndMetadataNever() throws {
        let strict = WebhookDestinationPolicy()
        let inside = WebhookDestinationPolicy(allowPrivate: true)
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
        let strict = WebhookDestinationPolicy()
        #expect(try strict.url("https://hooks.example.com/herald?tenant=acme").host == "hooks.example.com")
        #expect(try strict.url("https://93.184.216.34:8443/in").port == 8443)
        for bad in [
            "http://hooks.example.com/in", "ftp://hooks.example.com", "https://", "hooks.example.com/in", "https://user:pw@hooks.example.com",
            "https://hooks.example.com/in#x", "https://127.0.0.1/in", "https://[::1]:8080/in", "https://169.254.169.254/latest/meta-data",
            "https://10.0.0.5/in", "https://example.com/" + String(repeating: "a", count: 2048), "not a url"
        ] {
            #expect(throws: InputError.self, "\(bad)") { try strict.url(bad) }
        }
        let tests = WebhookDestinationPolicy(allowHTTP: true, allowPrivate: true)
        #expect(try tests.url("http://127.0.0.1:9000/hook").port == 9000)
        #expect(throws: InputError.self) { try tests.url("http://169.254.169.254/") }
    }

    @Test func theOperatorsSwitchesAreReadStrictly() throws {
        #expect(try WebhookDestinationPolicy(environment: [:]) == WebhookDestinationPolicy())
        #expect(
            try WebhookDestinationPolicy(environment: ["HERALD_WEBHOOK_ALLOW_HTTP": "1", "HERALD_WEBHOOK_ALLOW_PRIVATE": "true"])
                == WebhookDestinationPolicy(allowHTTP: true, allowPrivate: true))
        #expect(throws: InputError.self) { try WebhookDestinationPolicy(environment: ["HERALD_WEBHOOK_ALLOW_PRIVATE": "yes"]) }
    }
}
