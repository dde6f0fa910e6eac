import CCurl
import Foundation
import Testing

/// The typed setopt/getinfo shims reach libcurl with the right argument types.
@Suite struct CCurlShimTests {
    @Test func libcurlSupportsHTTP2() throws {
        let info = try #require(curl_version_info(CURLVERSION_TENTH))
        #expect(info.pointee.features & CURL_VERSION_HTTP2 != 0)
    }

    @Test func anEasyTransferThroughTheShimsReadsAFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ccurl-\(UUID().uuidString).txt")
        try Data("hello from libcurl".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let handle = try #require(curl_easy_init())
        defer { curl_easy_cleanup(handle) }
        final class Sink { var data = Data() }
        let sink = Sink()
        let context = Unmanaged.passUnretained(sink).toOpaque()

        #expect(herald_easy_setopt_string(handle, CURLOPT_URL, "file://" + file.path) == CURLE_OK)
        #expect(herald_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1) == CURLE_OK)
        #expect(herald_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, 1 << 20) == CURLE_OK)
        #expect(herald_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context) == CURLE_OK)
        #expect(
            herald_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                guard let data, let context else { return 0 }
                let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                sink.data.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: size * count)
                return size * count
            } == CURLE_OK)
        #expect(curl_easy_perform(handle) == CURLE_OK)
        #expect(String(decoding: sink.data, as: UTF8.self) == "hello from libcurl")

        var downloaded: curl_off_t = 0
        #expect(herald_easy_getinfo_off_t(handle, CURLINFO_SIZE_DOWNLOAD_T, &downloaded) == CURLE_OK)
        #expect(downloaded == 18)
        var url: UnsafeMutablePointer<CChar>?
        #expect(herald_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK)
        #expect(url.map { String(cString: $0) } == "file://" + file.path)
    }

    @Test func theMultiHandleAcceptsMultiplexing() throws {
        let multi = try #require(curl_multi_init())
        defer { curl_multi_cleanup(multi) }
        #expect(herald_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)) == CURLM_OK)
        #expect(herald_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 4) == CURLM_OK)
    }
}
