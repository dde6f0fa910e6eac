-- Escalation by engagement (docs/notifications.md#not-opened): an assignment or a request for
-- approval its person has not opened within the policy's `unopened` interval. One timer per
-- wait, like the approval reminder; its firing reads the person's item again and is skipped
-- once it was read or archived.
ALTER TABLE activity_timers DROP CONSTRAINT activity_timers_kind_check;
ALTER TABLE activity_timers ADD CONSTRAINT activity_timers_kind_check
    CHECK (kind IN ('approval_reminder', 'escalation', 'deadline_soon', 'overdue', 'unopened'));
