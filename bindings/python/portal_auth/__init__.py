"""Python binding for Portal's Client Auth (the emulator lives in portal_auth.emulator)."""
