"""Fake Google and Apple authorize pages: they consume the OAuth `state` and redirect
back to the app's redirect URL with a single-use grant, as the real providers and
Portal's callback would."""

from urllib.parse import parse_qs

from .messages import Request, Response, html_response
from .state import OAUTH_OUTCOMES, State
from .urls import append_query, encode_query_value

PROVIDERS = {"google": "GOOGLE", "apple": "APPLE"}


class FakeProviders:
    """The fake Google and Apple sign-in pages that the authorize URLs lead to."""

    def __init__(self, state: State):
        self._state = state

    def authorize(self, provider: str, request: Request) -> Response:
        """A provider's answer: a redirect back to the app with a grant, or with an error."""
        login_type = PROVIDERS[provider]
        # Last occurrence wins, matching how the client parses redirect queries.
        query = {name: values[-1] for name, values in parse_qs(request.query, keep_blank_values=True).items()}
        controls = self._state.controls()
        outcome = query.get("outcome", controls.oauth_outcome)
        if outcome not in OAUTH_OUTCOMES:
            return html_response(400, "Sign-in failed", "Unknown outcome.")
        email = query.get("email", controls.oauth_email).strip()
        if not email:
            return html_response(400, "Sign-in failed", "Empty email.")
        found = self._state.oauth_state(query.get("state", ""))
        if found is None:
            return html_response(400, "Sign-in failed", "Unknown or already used state.")
        env = self._state.environment(found.environment_id)
        if env is None or login_type not in env.allowed_methods:
            return html_response(400, "Sign-in failed", "This provider is not enabled.")
        if self._state.consume_oauth_state(query["state"]) is None:
            # Lost a race with another use of the same state.
            return html_response(400, "Sign-in failed", "Unknown or already used state.")
        if outcome == "error":
            # Percent-encoded as a provider would; any text, so a client's escaping can be tested.
            params = "error=" + encode_query_value(query.get("error", controls.oauth_error))
        else:
            grant = self._state.create_grant("oauth", env.id, email, found.is_account_abstracted)
            params = f"token={grant}&login_type={login_type}"
        location = append_query(found.redirect_url, params)
        return html_response(302, "Signed in", "Returning to the app.", [("Location", location)], link=location)
