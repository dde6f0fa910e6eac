#if canImport(UserNotifications) && canImport(Darwin)
    import Foundation
    import UserNotifications

    // Apple platforms only (it cannot be compiled on the project's Linux machines); what it
    // decides is in PushAction.swift, tested everywhere.

    /// Herald's pushes on iPhone, iPad and Mac: the categories, the buttons, the tokens.
    public enum HeraldPushes {
        /// Registers the two categories (`ACTIVITY_ASSIGNED`: Start; `ACTIVITY_APPROVAL`:
        /// Approve, Send back) with their buttons, beside the app's own categories.
        public static func registerCategories(
            center: UNUserNotificationCenter = .current(),
            titles: [PushAction: String] = [.start: "Start", .approve: "Approve", .sendBack: "Send back"]
        ) async {
            var categories = await center.notificationCategories()
            for (identifier, actions) in PushAction.categories {
                let buttons = actions.map { action in
                    UNNotificationAction(
                        identifier: action.rawValue, title: titles[action] ?? action.rawValue,
                        options: action == .sendBack ? [.foreground] : [.authenticationRequired])
                }
                categories = categories.filter { $0.identifier != identifier }
                categories.insert(UNNotificationCategory(identifier: identifier, actions: buttons, intentIdentifiers: []))
            }
            center.setNotificationCategories(categories)
        }

        /// From `userNotificationCenter(_:didReceive:)`: the button pressed, performed with the
        /// version the push carried, and the tap reported (`Inbox.opened`, with the action when
        /// it was done). `nil` when the response is not one of Herald's buttons (a plain tap).
        public static func handle(_ response: UNNotificationResponse, client: HeraldClient) async throws -> PushActionOutcome? {
            let payload = response.notification.request.content.userInfo
            guard let action = PushAction(rawValue: response.actionIdentifier), let push = ActivityPush(payload: payload) else {
                _ = try? await client.inbox.opened(push: payload)
                return nil
            }
            let outcome = try await client.perform(action, on: push)
            let done = if case .done = outcome { true } else { false }
            _ = try? await client.inbox.opened(push: payload, action: done ? action : nil)
            return outcome
        }

        /// From `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`: the APNs
        /// token, in hexadecimal, registered for `app`.
        @discardableResult
        public static func register(deviceToken: Data, app: DeviceRegistration.App, client: HeraldClient) async throws -> Device {
            try await client.register(.apns(token: deviceToken, app: app))
        }
    }
#endif
