import Foundation

/// The caller's phones and browsers (docs/api.md in the Herald repository, "Devices").
extension HeraldClient {
    /// The caller's devices (tokens shortened).
    public func devices() async throws -> [Device] { try await call("GET", "/v1/devices", as: Items<Device>.self).0.items }

    /// Registers (or refreshes) this phone: at every launch after sign-in and whenever the OS
    /// or FCM hands over a new token.
    @discardableResult
    public func register(_ device: DeviceRegistration) async throws -> Device {
        try await call("POST", "/v1/devices", json: device.body).0
    }

    /// Logs it out (at sign-out): nothing is sent to it until it is registered again.
    public func remove(_ device: DeviceRegistration) async throws {
        try await perform("DELETE", "/v1/devices/\(escaped(device.address))")
    }
}
