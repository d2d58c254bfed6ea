"""The fleet of boards: provisioning, settings and firmware over the air, the hall check, the
firmware's build and deploy over USB, and simulated boards for a demo or a rehearsal."""
