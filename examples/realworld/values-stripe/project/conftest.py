import stripe

stripe.enable_telemetry = False  # the SDK's per-process request metrics would leak between tests
