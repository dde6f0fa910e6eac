-- Workers look for due timers in (due_at, id) order, and a look that continues a burst (a
-- batch came back full) starts after the last timer the batch before it took. The timers of a
-- burst often fall due at one instant (the deadline reminders at 09:00), so due_at alone
-- cannot tell where a batch ended. Under a snapshot held in another session, every look had
-- walked the entries of the burst's timers already fired (vacuum cannot remove them), and a
-- burst cost the square of its size.
CREATE INDEX activity_timers_next ON activity_timers (due_at, id) WHERE status = 'pending';
DROP INDEX activity_timers_due;
