"""Everything the emulated backend remembers: environments, users, grants, OAuth
states, the magic-link outbox, issued sessions and test-controlled settings.

One lock guards it all; each public method is one atomic step, so that concurrent
requests can never redeem a grant or spend a userJwt twice.
"""

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import TypedDict

from . import issued, jwt, totp
from .config import Config, Environment

USER_JWT_LIFETIME = 600
DEFAULT_OAUTH_EMAIL = "oauth-user@example.com"
GRANT_KINDS = ("magic", "oauth")
OAUTH_OUTCOMES = ("success", "error")
# What the fake providers put in `error=` when the outcome is an error.
DEFAULT_OAUTH_ERROR = "oauth_failed"


@dataclass
class User:
    """An emulated user of one environment, with the TOTP secret once enrolled."""

    environment_id: str
    email: str
    end_user_id: str
    client_id: str
    # Portal fixes gas sponsorship when it creates the user's client (first sign-in).
    is_account_abstracted: bool
    totp_secret: bytes | None = None


@dataclass
class Grant:
    """A single-use grant token's sign-in."""

    kind: str
    environment_id: str
    email: str
    is_account_abstracted: bool | None  # None when the sign-in did not say
    used: bool = False


@dataclass
class OAuthState:
    """A single-use OAuth state of one authorize URL."""

    environment_id: str
    redirect_url: str
    is_account_abstracted: bool | None  # None when the client did not send it
    used: bool = False


@dataclass
class Controls:
    """The settings a test changes through /_emulator/control."""

    oauth_outcome: str = "success"
    oauth_email: str = DEFAULT_OAUTH_EMAIL
    clock_offset_seconds: float = 0.0
    oauth_error: str = DEFAULT_OAUTH_ERROR

    def as_dict(self) -> dict[str, str | float]:
        """The controls as GET /_emulator/control shows them."""
        return {
            "oauthOutcome": self.oauth_outcome,
            "oauthEmail": self.oauth_email,
            "clockOffsetSeconds": self.clock_offset_seconds,
            "oauthError": self.oauth_error,
        }


class Session(TypedDict):
    """An issued session, as served by GET /_emulator/sessions."""

    environmentId: str
    endUserId: str
    clientId: str
    clientSessionToken: str
    isAccountAbstracted: bool
    via: str


# A sent magic link, as served by GET /_emulator/outbox (field name -> text).
OutboxMessage = dict[str, str]


@dataclass
class _Store:
    environments: dict[str, Environment]
    users: dict[tuple[str, str], User] = field(default_factory=dict)  # (env id, lowercased email)
    grants: dict[str, Grant] = field(default_factory=dict)  # token -> Grant
    oauth_states: dict[str, OAuthState] = field(default_factory=dict)  # state -> OAuthState
    outbox: list[OutboxMessage] = field(default_factory=list)
    send_counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (env id, lowercased email)
    sessions: list[Session] = field(default_factory=list)
    spent_jtis: set[str] = field(default_factory=set)
    controls: Controls = field(default_factory=Controls)


class State:
    """Everything the emulated backend remembers, behind one lock."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._lock = threading.Lock()
        # Notified when a message reaches the outbox (wait_for_outbox).
        self._mail = threading.Condition(self._lock)
        self._store = self._fresh_store()

    def _fresh_store(self) -> _Store:
        return _Store(environments={env.id: env for env in self.config.environments})

    def reset(self) -> None:
        """Forgets every user, grant, session and message, and restores the configured environments."""
        with self._lock:
            self._store = self._fresh_store()

    # -- clock and controls -------------------------------------------------

    def now(self) -> float:
        """The emulated time: the clock plus the test's offset."""
        # Tests shift the clock instead of waiting for a userJwt to expire.
        with self._lock:
            return time.time() + self._store.controls.clock_offset_seconds

    def controls(self) -> Controls:
        """The current controls."""
        with self._lock:
            current = self._store.controls
            return Controls(current.oauth_outcome, current.oauth_email, current.clock_offset_seconds,
                            current.oauth_error)

    def update_controls(
        self,
        outcome: str | None = None,
        email: str | None = None,
        clock_offset: float | None = None,
        error: str | None = None,
    ) -> Controls:
        """Changes the given controls."""
        with self._lock:
            controls = self._store.controls
            if outcome is not None:
                controls.oauth_outcome = outcome
            if email is not None:
                controls.oauth_email = email
            if clock_offset is not None:
                controls.clock_offset_seconds = clock_offset
            if error is not None:
                controls.oauth_error = error
        return self.controls()

    # -- environments -------------------------------------------------------

    def environment(self, env_id: str) -> Environment | None:
        """The environment `env_id`, or None."""
        with self._lock:
            return self._store.environments.get(env_id)

    def upsert_environment(self, env: Environment) -> None:
        """Adds or replaces an environment."""
        with self._lock:
            self._store.environments[env.id] = env

    # -- magic links ----------------------------------------------------------

    def count_send(self, env_id: str, email: str) -> bool:
        """Count one send to this address; False once the limit is reached."""
        key = (env_id, email.lower())
        with self._lock:
            sent = self._store.send_counts.get(key, 0)
            if sent >= self.config.magic_link_send_limit:
                return False
            self._store.send_counts[key] = sent + 1
            return True

    def add_outbox(self, message: OutboxMessage) -> None:
        """Puts a sent magic-link email in the outbox."""
        with self._lock:
            self._store.outbox.append(dict(message))
            self._mail.notify_all()

    def wait_for_outbox(self, email: str, count: int, timeout: float) -> bool:
        """Block until `count` messages to `email` are in the outbox; whether they are."""
        wanted = email.strip().lower()

        def arrived() -> bool:
            return sum(message["email"].strip().lower() == wanted for message in self._store.outbox) >= count

        with self._mail:
            return self._mail.wait_for(arrived, timeout)

    def outbox_message(self, message_id: str) -> OutboxMessage | None:
        """The email of id `message_id` (its button's link names it), or None."""
        with self._lock:
            found = next((message for message in self._store.outbox if message["id"] == message_id), None)
            return None if found is None else dict(found)

    def outbox(self, email: str | None = None) -> list[OutboxMessage]:
        """The emails sent, to `email` only when given."""
        with self._lock:
            messages = [dict(message) for message in self._store.outbox]
        if email is None:
            return messages
        wanted = email.strip().lower()
        return [message for message in messages if message["email"].strip().lower() == wanted]

    # -- grants and OAuth states --------------------------------------------

    def create_grant(self, kind: str, env_id: str, email: str, is_account_abstracted: bool | None) -> str:
        """A new single-use grant token for `email`."""
        token = ("mlg_" if kind == "magic" else "oag_") + secrets.token_hex(24)
        with self._lock:
            self._store.grants[token] = Grant(kind, env_id, email, is_account_abstracted)
        issued.record("grant", token)
        return token

    def redeem_grant(self, token: str, kind: str, env_id: str) -> Grant | None:
        """Mark the grant used and return it, or None if it cannot be redeemed here."""
        with self._lock:
            grant = self._store.grants.get(token)
            if grant is None or grant.used or grant.kind != kind or grant.environment_id != env_id:
                return None
            grant.used = True
            return grant

    def create_oauth_state(self, env_id: str, redirect_url: str, is_account_abstracted: bool | None) -> str:
        """A new single-use OAuth state for one authorize URL."""
        state = "st_" + secrets.token_hex(16)
        with self._lock:
            self._store.oauth_states[state] = OAuthState(env_id, redirect_url, is_account_abstracted)
        return state

    def oauth_state(self, state: str) -> OAuthState | None:
        """The OAuth state `state`, unspent, or None."""
        with self._lock:
            found = self._store.oauth_states.get(state)
            return None if found is None or found.used else found

    def consume_oauth_state(self, state: str) -> OAuthState | None:
        """Spends the OAuth state `state`; None if unknown or spent already."""
        with self._lock:
            found = self._store.oauth_states.get(state)
            if found is None or found.used:
                return None
            found.used = True
            return found

    # -- users, TOTP and sessions --------------------------------------------

    def find_or_create_user(self, env_id: str, email: str, is_account_abstracted: bool | None) -> User:
        """The user of `email` in the environment, made on first sign-in."""
        key = (env_id, email.strip().lower())
        with self._lock:
            user = self._store.users.get(key)
            if user is None:
                user = User(
                    environment_id=env_id,
                    email=key[1],
                    end_user_id="eu_" + secrets.token_hex(8),
                    client_id="cl_" + secrets.token_hex(8),
                    is_account_abstracted=bool(is_account_abstracted),
                )
                self._store.users[key] = user
            return user

    def user_by_id(self, env_id: str, end_user_id: str) -> User | None:
        """The user `end_user_id` of the environment, or None."""
        with self._lock:
            for user in self._store.users.values():
                if user.environment_id == env_id and user.end_user_id == end_user_id:
                    return user
            return None

    def user_by_email(self, env_id: str, email: str) -> User | None:
        """The user of `email` in the environment, or None."""
        with self._lock:
            return self._store.users.get((env_id, email.strip().lower()))

    def enroll_totp(self, user: User) -> bytes | None:
        """Create the user's TOTP secret on first use; returns it only when new."""
        with self._lock:
            if user.totp_secret is not None:
                return None
            user.totp_secret = totp.new_secret()
            return user.totp_secret

    def mint_user_jwt(self, user: User) -> str:
        """A new userJwt for `user`'s TOTP step."""
        issued_at = int(self.now())
        claims = {
            "endUserId": user.end_user_id,
            "env": user.environment_id,
            "jti": secrets.token_hex(16),
            "iat": issued_at,
            "exp": issued_at + USER_JWT_LIFETIME,
        }
        user_jwt = jwt.sign(claims, self.config.jwt_secret)
        issued.record("userJwt", user_jwt)
        return user_jwt

    def jti_spent(self, jti: str) -> bool:
        """Whether the userJwt of `jti` has been spent."""
        with self._lock:
            return jti in self._store.spent_jtis

    def spend_jti(self, jti: str) -> bool:
        """Spend a userJwt; False if it already was (two racing correct codes)."""
        with self._lock:
            if jti in self._store.spent_jtis:
                return False
            self._store.spent_jtis.add(jti)
            return True

    def issue_session(self, user: User, via: str) -> Session:
        """A new Client Session Token for `user`, recorded."""
        session: Session = {
            "environmentId": user.environment_id,
            "endUserId": user.end_user_id,
            "clientId": user.client_id,
            "clientSessionToken": "cst_" + secrets.token_hex(24),
            "isAccountAbstracted": user.is_account_abstracted,
            "via": via,
        }
        with self._lock:
            self._store.sessions.append(session)
        issued.record("clientSessionToken", session["clientSessionToken"])
        return session.copy()

    def sessions(self) -> list[Session]:
        """The sessions issued, oldest first."""
        with self._lock:
            return [session.copy() for session in self._store.sessions]
