/// What a provider's device addresses are (docs/apps.md, "Registering a device"): the one
/// place the registration rules and the display of an address name a provider. How a channel
/// sends is its conformer's (HeraldPush, `PushChannel`).
extension PushProvider {
    /// A device registers a browser's subscription (an endpoint and its keys), not a bare token.
    public var takesSubscription: Bool { self == .webpush }
    /// A device may be addressed by its installation id (`fid`) instead of a token.
    public var takesInstallationID: Bool { self == .fcm }
    /// Its device tokens are hexadecimal (and so one safe segment of a request path).
    public var hasHexTokens: Bool { self == .apns }
    /// It carries Live Activities (ActivityKit's push-to-start and update tokens).
    public var carriesLiveActivities: Bool { self == .apns }
    /// Its address is an endpoint URL whose path is as secret as a token: shown by its origin.
    public var addressIsEndpoint: Bool { self == .webpush }
}
