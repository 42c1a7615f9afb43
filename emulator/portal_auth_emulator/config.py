"""Emulator configuration: the embedded default and loading a JSON file.

Validation errors name the offending key but never echo values (the config holds
the JWT signing key).
"""

import copy
import json
import os
from dataclasses import dataclass
from typing import TypeGuard

from .messages import JsonObject

DEFAULT_CONFIG: JsonObject = {
    "jwtSecret": "emulator-signing-key",
    "magicLinkSendLimit": 5,
    "environments": [
        {
            "id": "env-demo",
            "allowedMethods": ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"],
            "redirectUrls": ["myapp://auth/callback", "http://127.0.0.1:8765/callback"],
            "totpRequired": True,
            "accountAbstraction": False,
            "autoCreateWallet": True,
        },
        {
            "id": "env-open",
            "allowedMethods": ["EMAIL_MAGIC_LINK", "GOOGLE"],
            "redirectUrls": ["myapp://auth/callback", "http://127.0.0.1:8765/callback"],
            "totpRequired": False,
            "accountAbstraction": True,
            "autoCreateWallet": False,
        },
    ],
}

_TOP_KEYS = {"jwtSecret", "magicLinkSendLimit", "environments"}
_ENV_KEYS = {
    "id",
    "allowedMethods",
    "redirectUrls",
    "totpRequired",
    "accountAbstraction",
    "autoCreateWallet",
}


class ConfigError(ValueError):
    """The configuration is not usable."""


@dataclass(frozen=True)
class Environment:
    """One emulated auth environment: its id, enabled methods, allowed redirect URLs and flags."""

    id: str
    allowed_methods: tuple[str, ...]
    redirect_urls: tuple[str, ...]
    totp_required: bool
    account_abstraction: bool
    auto_create_wallet: bool


@dataclass(frozen=True)
class Config:
    """The emulator's configuration: the userJwt signing secret, the magic-link send limit, the environments."""

    jwt_secret: str
    magic_link_send_limit: int
    environments: tuple[Environment, ...]


def default_config() -> Config:
    """The embedded configuration (the environments the demo and the tests use)."""
    return parse_config(copy.deepcopy(DEFAULT_CONFIG))


def load_config_file(path: str | os.PathLike[str]) -> Config:
    """The configuration in the JSON file at `path`; ConfigError when it is unusable."""
    with open(path, encoding="utf-8") as handle:
        try:
            raw = json.load(handle)
        except json.JSONDecodeError as exc:
            # Position only: the message of JSONDecodeError does not quote the document.
            raise ConfigError(f"invalid JSON at line {exc.lineno} column {exc.colno}") from None
    return parse_config(raw)


def parse_config(raw: object) -> Config:
    """Validate a decoded JSON document; missing keys take the defaults."""
    if isinstance(raw, Config):
        return raw
    if not isinstance(raw, dict):
        raise ConfigError("config must be a JSON object")
    _reject_unknown(raw, _TOP_KEYS, "config")
    secret = raw.get("jwtSecret", DEFAULT_CONFIG["jwtSecret"])
    if not isinstance(secret, str) or not secret:
        raise ConfigError("jwtSecret must be a non-empty string")
    limit = raw.get("magicLinkSendLimit", DEFAULT_CONFIG["magicLinkSendLimit"])
    if not _is_int(limit) or limit < 0:
        raise ConfigError("magicLinkSendLimit must be a non-negative integer")
    envs = raw.get("environments", DEFAULT_CONFIG["environments"])
    if not isinstance(envs, list) or not envs:
        raise ConfigError("environments must be a non-empty list")
    parsed = tuple(parse_environment(env) for env in envs)
    ids = [env.id for env in parsed]
    if len(set(ids)) != len(ids):
        raise ConfigError("environment ids must be unique")
    return Config(jwt_secret=secret, magic_link_send_limit=limit, environments=parsed)


def parse_environment(raw: object) -> Environment:
    """One environment of a decoded configuration; ConfigError when it is unusable."""
    if not isinstance(raw, dict):
        raise ConfigError("each environment must be a JSON object")
    _reject_unknown(raw, _ENV_KEYS, "environment")
    env_id = raw.get("id")
    if not isinstance(env_id, str) or not env_id.strip():
        raise ConfigError("environment id must be a non-empty string")
    # Any method string is accepted so that a test can serve unknown values to a client.
    methods = _string_list(raw.get("allowedMethods", []), "allowedMethods")
    urls = _string_list(raw.get("redirectUrls", []), "redirectUrls")
    flags: dict[str, bool] = {}
    for key in ("totpRequired", "accountAbstraction", "autoCreateWallet"):
        value = raw.get(key, False)
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be a boolean")
        flags[key] = value
    return Environment(
        id=env_id,
        allowed_methods=methods,
        redirect_urls=urls,
        totp_required=flags["totpRequired"],
        account_abstraction=flags["accountAbstraction"],
        auto_create_wallet=flags["autoCreateWallet"],
    )


def _string_list(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{key} must be a list of non-empty strings")
    return tuple(value)


def _reject_unknown(raw: JsonObject, allowed: set[str], where: str) -> None:
    # Catches typos that would otherwise silently fall back to a default.
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ConfigError(f"unknown {where} key: {unknown[0]}")


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
