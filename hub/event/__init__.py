"""The event's state: the fold of the log (competition, station states), the log itself
(store), the event folder and its lock, operator actions' shapes, the hub clock."""
