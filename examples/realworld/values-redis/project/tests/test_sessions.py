"""The session cache pinned: the store's call, with the client it is given, no server needed."""

import sessions


def test_a_session_is_saved_with_the_regions_client(callpin):
    with callpin.pin(spy=["store.save"], stub={"store.save": callpin.returns(True)}) as rec:
        rec.mark("returned", sessions.remember("eu", "7f3a", "ada"))
