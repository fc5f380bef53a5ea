"""A run against its plan: its directory and bounded scan (rundir), capture files' metadata
(formats), planned against actual (calibration), each rank's status (status), and the capture
measured on this machine before a run (preflight)."""
