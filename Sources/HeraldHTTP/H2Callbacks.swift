import CHTTP2

/// nghttp2's callbacks for a client session, each handing what it learnt to the
/// `H2Connection` whose session it is (its `user_data`). They run on the loop thread,
/// inside `nghttp2_session_mem_recv` and `nghttp2_session_mem_send`.
enum H2Callbacks {
    static func install(on callbacks: OpaquePointer?) {
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, context in
            guard let frame, let name, let value, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
                let exchange = H2Callbacks.connection(context)?.exchange(onStream: frame.pointee.hd.stream_id)
            else { return 0 }
            exchange.receiveHeader(
                name: UnsafeBufferPointer(start: name, count: nameLength), value: UnsafeBufferPointer(start: value, count: valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, data, length, context in
            guard let data, let exchange = H2Callbacks.connection(context)?.exchange(onStream: stream) else { return 0 }
            exchange.body.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, errorCode, context in
            H2Callbacks.connection(context)?.streamClosed(stream, errorCode: errorCode)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, context in
            if let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) {
                H2Callbacks.connection(context)?.headersLeft(onStream: frame.pointee.hd.stream_id)
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks) { _, frame, _, context in
            if let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) {
                H2Callbacks.connection(context)?.headersNotSent(onStream: frame.pointee.hd.stream_id)
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, context in
            if let frame, frame.pointee.hd.type == UInt8(NGHTTP2_GOAWAY.rawValue) {
                H2Callbacks.connection(context)?.serverIsGoingAway()
            }
            return 0
        }
    }

    private static func connection(_ context: UnsafeMutableRawPointer?) -> H2Connection? {
        context.map { Unmanaged<H2Connection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Feeds a request body to nghttp2 as DATA frames (`nghttp2_data_provider.read_callback`).
    static let readBody: nghttp2_data_source_read_callback = { _, stream, buffer, length, flags, _, context in
        guard let buffer, let flags, let exchange = H2Callbacks.connection(context)?.exchange(onStream: stream) else {
            return ssize_t(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        let body = exchange.request.body
        let count = min(length, body.count - exchange.bodyOffset)
        body.withUnsafeBufferPointer { bytes in
            buffer.update(from: bytes.baseAddress! + exchange.bodyOffset, count: count)
        }
        exchange.bodyOffset += count
        if exchange.bodyOffset == body.count { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }
}
