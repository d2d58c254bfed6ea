# The entry scripts' door to a version's boot trial (boot_trial.py).  At a
# trial's boot main.py and sim_main.py import `update` (a firmware's trial:
# as the first module of the version; new settings: then they call
# update.boot instead of config.boot), and App.run runs update.run.  The
# entry script is never sent over the air: a board keeps the one it was
# first flashed with, so every version keeps this name and these two
# functions.  Firmware 0.5.0 and before had the trial here (with the
# settings command: settings_update.py now); a board flashed with one of
# those boots a newer version's trial through this door, and a board
# flashed since boots an older version's (its own update.py) the same way.

from boot_trial import boot, run  # noqa: F401
