"""Tests of the Portal Client Auth emulator (stdlib unittest only).

Nothing here sleeps to wait for something: readiness comes from start() (or the
CLI's first line), and concurrency is observed through /_emulator/wait.
"""

import base64
import email.utils
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import tempfile
import unittest
import unittest.mock
import uuid
from urllib.parse import parse_qs, urlsplit

from portal_auth_emulator import Emulator, jwt, totp
from portal_auth_emulator.loopback_ports import PORTS, LoopbackPorts
from portal_auth_emulator.urls import encode_query_value

API = "/api/v3/auth"
CALLBACK = "myapp://auth/callback"
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Client:
    """A tiny HTTP client; one connection per call unless `conn` is given."""

    def __init__(self, base_url: str):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port

    def connection(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=30)

    def call(self, method, path, body=None, headers=None, conn=None):
        own = conn is None
        conn = conn or self.connection()
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            raw = response.read()
            return response.status, dict(response.getheaders()), raw
        finally:
            if own:
                conn.close()

    def json(self, method, path, body=None, headers=None, conn=None):
        status, _, raw = self.call(method, path, body, headers, conn)
        return status, json.loads(raw) if raw else None


def portal_headers(env="env-demo", **overrides):
    headers = {
        "x-portal-auth-environment-id": env,
        "Accept": "application/json",
        "Content-Type": "application/json",
        "X-Portal-Trace-Id": str(uuid.uuid4()),
    }
    for name, value in overrides.items():
        name = name.replace("_", "-")
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    return headers


class EmulatorTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.emulator = Emulator()
        cls.base = cls.emulator.start()
        cls.client = Client(cls.base)

    @classmethod
    def tearDownClass(cls):
        cls.emulator.stop()

    def setUp(self):
        status, _ = self.client.json("POST", "/_emulator/reset")
        self.assertEqual(status, 200)

    # helpers ---------------------------------------------------------------

    def portal(self, method, path, body=None, env="env-demo", **header_overrides):
        return self.client.json(method, API + path, body, portal_headers(env, **header_overrides))

    def send_link(self, email="user@example.com", env="env-demo", **extra):
        body = {"email": email, "redirectUrl": CALLBACK, "fromEmail": "hi@example.com", "templateId": "tpl"}
        body.update(extra)
        return self.portal("POST", "/magic-links", body, env=env)

    def grant(self, email="user@example.com", env="env-demo", kind="magic", **extra):
        status, answer = self.client.json(
            "POST", "/_emulator/grants", {"environmentId": env, "email": email, "kind": kind, **extra}
        )
        self.assertEqual(status, 200)
        return answer["token"]

    def oauth_urls(self, query, env="env-demo"):
        return self.client.json("GET", f"{API}/oauth/urls?{query}", headers=portal_headers(env))


class IssuedSecretsTests(EmulatorTestCase):
    def test_every_issued_secret_is_appended_to_the_file(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "secrets")
            with unittest.mock.patch.dict(os.environ, {"PORTAL_AUTH_TEST_SECRETS_FILE": path}):
                grant = self.grant()
                step = self.portal("POST", "/magic-links/validations", {"token": grant})[1]["data"]
                secret = parse_qs(urlsplit(step["totpLink"]).query)["secret"][0]
                key = base64.b32decode(secret + "=" * (-len(secret) % 8))
                bearer = {"Authorization": "Bearer " + step["userJwt"]}
                session = self.portal("POST", "/totps/validations", {"code": totp.totp(key, time.time())}, **bearer)[1]
            with open(path, encoding="utf-8") as file:
                recorded = [tuple(line.rstrip("\n").split("\t")) for line in file]
        self.assertEqual(recorded, [
            ("grant", grant),
            ("userJwt", step["userJwt"]),
            ("totpLink", step["totpLink"]),
            ("totpSecret", secret),
            ("clientSessionToken", session["data"]["clientSessionToken"]),
        ])
        self.grant()  # without the variable nothing is written anywhere
        self.assertFalse(os.path.exists(path))


class TotpTests(unittest.TestCase):
    KEY = b"12345678901234567890"

    def test_rfc6238_vector(self):
        self.assertEqual(totp.totp(self.KEY, 59, digits=8), "94287082")
        self.assertEqual(totp.totp(self.KEY, 59), "287082")
        self.assertEqual(totp.totp(self.KEY, 1111111109, digits=8), "07081804")

    def test_window_is_one_step_each_way(self):
        now = 1_700_000_000
        self.assertTrue(totp.verify(self.KEY, totp.totp(self.KEY, now - 30), now))
        self.assertTrue(totp.verify(self.KEY, totp.totp(self.KEY, now + 30), now))
        self.assertFalse(totp.verify(self.KEY, totp.totp(self.KEY, now - 90), now))
        self.assertFalse(totp.verify(self.KEY, 123456, now))

    def test_otpauth_link(self):
        key = totp.new_secret()
        link = totp.otpauth_link("a@b.com", key)
        secret = parse_qs(urlsplit(link).query)["secret"][0]
        self.assertRegex(secret, r"^[A-Z2-7]+$")
        self.assertEqual(base64.b32decode(secret + "=" * (-len(secret) % 8)), key)
        self.assertTrue(link.startswith("otpauth://totp/Portal:a@b.com?secret="))


class JwtTests(unittest.TestCase):
    def test_round_trip(self):
        claims = {"endUserId": "eu_1", "env": "e", "jti": "j", "iat": 100, "exp": 700}
        token = jwt.sign(claims, "key")
        self.assertNotIn("=", token)
        header = json.loads(jwt.b64url_decode(token.split(".")[0]))
        self.assertEqual(header, {"alg": "HS256", "typ": "JWT"})
        self.assertEqual(jwt.verify(token, "key", now=699), claims)

    def test_rejections(self):
        token = jwt.sign({"endUserId": "eu_1", "exp": 700}, "key")
        head, body, sig = token.split(".")
        forged = jwt.b64url_encode(json.dumps({"endUserId": "eu_2", "exp": 700}).encode())
        cases = {
            "wrong key": (token, "other"),
            "forged claims": (f"{head}.{forged}.{sig}", "key"),
            "two segments": (f"{head}.{body}", "key"),
            "bad alphabet": (f"{head}.{body}.{sig}+", "key"),
        }
        for name, (candidate, secret) in cases.items():
            with self.subTest(name), self.assertRaises(jwt.JwtError):
                jwt.verify(candidate, secret, now=100)
        with self.assertRaises(jwt.JwtError):
            jwt.verify(token, "key", now=700)


class HeaderTests(EmulatorTestCase):
    def test_methods(self):
        self.assertEqual(
            self.portal("GET", "/methods"),
            (200, {"data": {"allowedAuthMethods": ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"], "autoCreateWallet": True}}),
        )

    def test_header_violations(self):
        cases = [
            ({"x-portal-auth-environment-id": "nope"}, 401, "unknown auth environment"),
            ({"x-portal-auth-environment-id": None}, 401, "unknown auth environment"),
            ({"Accept": None}, 400, "Accept"),
            ({"Accept": "*/*"}, 400, "Accept"),
            ({"Content-Type": None}, 400, "Content-Type"),
            ({"X-Portal-Trace-Id": None}, 400, "X-Portal-Trace-Id"),
            ({"X-Portal-Trace-Id": str(uuid.uuid4()).upper()}, 400, "X-Portal-Trace-Id"),
            ({"X-Portal-Trace-Id": str(uuid.uuid1())}, 400, "X-Portal-Trace-Id"),
            ({"Authorization": "Bearer x"}, 400, "unexpected Authorization header"),
        ]
        for overrides, status, message in cases:
            with self.subTest(overrides):
                headers = portal_headers()
                for name, value in overrides.items():
                    headers.pop(name, None)
                    if value is not None:
                        headers[name] = value
                self.assertEqual(self.client.json("GET", API + "/methods", headers=headers), (status, {"error": message}))

    def test_pages_a_test_has_a_browser_load(self):
        page = "<!doctype html><img src=\"http://127.0.0.1:1/x\">"
        self.assertEqual(self.client.json("POST", "/_emulator/pages", {"name": "hostile", "html": page}), (200, {"ok": True}))
        status, headers, raw = self.client.call("GET", "/_emulator/pages?name=hostile")
        self.assertEqual((status, headers["Content-Type"], raw.decode()), (200, "text/html; charset=utf-8", page))
        self.assertEqual(self.client.json("GET", "/_emulator/pages?name=other")[0], 404)
        self.assertEqual(self.client.json("POST", "/_emulator/pages", {"name": "", "html": page})[0], 400)
        self.client.json("POST", "/_emulator/reset")
        self.assertEqual(self.client.json("GET", "/_emulator/pages?name=hostile")[0], 404)

    def test_unknown_paths_head_and_keep_alive(self):
        self.assertEqual(self.portal("GET", "/nope"), (404, {"error": "not found"}))
        self.assertEqual(self.client.json("GET", "/elsewhere"), (404, {"error": "not found"}))
        status, headers, raw = self.client.call("HEAD", API + "/methods", headers=portal_headers())
        self.assertEqual((status, raw), (404, b""))
        self.assertEqual(headers["Content-Length"], str(len(b'{"error":"not found"}')))
        conn = self.client.connection()
        try:
            for _ in range(3):
                status, _ = self.client.json("GET", API + "/methods", headers=portal_headers(), conn=conn)
                self.assertEqual(status, 200)
        finally:
            conn.close()

    def test_body_limits_and_bad_json(self):
        status, _, raw = self.client.call("POST", API + "/magic-links", b"{" + b" " * (1 << 20) + b"}", portal_headers())
        self.assertEqual((status, json.loads(raw)), (413, {"error": "request body too large"}))
        self.assertEqual(self.client.json("POST", API + "/magic-links", "{nope", portal_headers())[0], 400)
        self.assertEqual(self.portal("POST", "/magic-links", [1])[0], 400)

    def test_requests_are_recorded(self):
        self.portal("GET", "/methods")
        self.client.json("GET", "/_emulator/outbox")  # control calls are not recorded
        self.oauth_urls("redirectUrl=" + encode_query_value(CALLBACK))
        status, answer = self.client.json("GET", "/_emulator/requests")
        self.assertEqual(status, 200)
        paths = [(entry["method"], entry["path"], entry["query"]) for entry in answer["requests"]]
        self.assertEqual(paths, [
            ("GET", API + "/methods", ""),
            ("GET", API + "/oauth/urls", "redirectUrl=myapp%3A%2F%2Fauth%2Fcallback"),
        ])
        self.assertEqual(answer["requests"][0]["headers"]["accept"], "application/json")
        self.assertEqual(self.client.json("DELETE", "/_emulator/requests")[0], 200)
        self.assertEqual(self.client.json("GET", "/_emulator/requests")[1], {"requests": []})


class MagicLinkTests(EmulatorTestCase):
    def test_full_magic_link_and_totp_flow(self):
        waiting = "/_emulator/outbox?email=USER%40example.com&count=1&timeout=0"
        self.assertEqual(self.client.json("GET", waiting), (408, {"messages": []}))
        self.assertEqual(self.send_link(), (200, {"data": {}}))
        self.assertEqual(self.client.json("GET", waiting)[0], 200)
        self.assertEqual(self.client.json("GET", "/_emulator/outbox?count=1")[0], 400)
        status, outbox = self.client.json("GET", "/_emulator/outbox?email=USER%40example.com")
        self.assertEqual(status, 200)
        [message] = outbox["messages"]
        self.assertEqual(message["environmentId"], "env-demo")
        self.assertEqual(message["redirectUrl"], CALLBACK)
        link_query = parse_qs(urlsplit(message["link"]).query)
        self.assertEqual(link_query["authMethod"], ["EMAIL_MAGIC_LINK"])
        grant = link_query["token"][0]
        # The email's button leads through the emulator to the link, as a click would.
        base = f"http://{self.client.host}:{self.client.port}"
        self.assertEqual(message["emailLink"], f"{base}/_emulator/mail/open?id={message['id']}")
        status, headers, _ = self.client.call("GET", message["emailLink"][len(base):])
        self.assertEqual((status, headers["Location"]), (302, message["link"]))
        self.assertEqual(self.client.call("GET", "/_emulator/mail/open?id=msg_unknown")[0], 404)

        status, answer = self.portal("POST", "/magic-links/validations", {"token": grant})
        self.assertEqual(status, 200)
        step = answer["data"]
        self.assertEqual(set(step), {"endUserId", "userJwt", "totpLink"})
        self.assertRegex(step["endUserId"], r"^eu_[0-9a-f]{16}$")
        claims = jwt.verify(step["userJwt"], "emulator-signing-key", time.time())
        self.assertEqual((claims["endUserId"], claims["env"]), (step["endUserId"], "env-demo"))
        self.assertEqual(claims["exp"] - claims["iat"], 600)
        self.assertRegex(
            step["totpLink"],
            r"^otpauth://totp/Portal:user@example\.com\?secret=[A-Z2-7]{32}&issuer=Portal&algorithm=SHA1&digits=6&period=30$",
        )
        secret = parse_qs(urlsplit(step["totpLink"]).query)["secret"][0]
        key = base64.b32decode(secret + "=" * (-len(secret) % 8))

        # The grant is single-use.
        self.assertEqual(self.portal("POST", "/magic-links/validations", {"token": grant}), (401, {"error": "invalid grant"}))

        bearer = {"Authorization": "Bearer " + step["userJwt"]}
        now = time.time()
        valid = {totp.totp(key, now + delta) for delta in (-60, -30, 0, 30, 60)}
        wrong = next(code for code in ("000000", "111111", "222222") if code not in valid)
        self.assertEqual(self.portal("POST", "/totps/validations", {"code": wrong}, **bearer)[0], 401)
        # The wrong code did not consume the JWT.
        status, answer = self.portal("POST", "/totps/validations", {"code": totp.totp(key, time.time())}, **bearer)
        self.assertEqual(status, 200)
        session = answer["data"]
        self.assertEqual(set(session), {"clientSessionToken", "clientId", "isAccountAbstracted"})
        self.assertTrue(session["clientSessionToken"].startswith("cst_"))
        self.assertFalse(session["isAccountAbstracted"])
        # Spent now.
        code = totp.totp(key, time.time())
        self.assertEqual(self.portal("POST", "/totps/validations", {"code": code}, **bearer)[0], 401)

        # A second sign-in: same user, no enrollment link, code from the control endpoint.
        status, answer = self.portal("POST", "/magic-links/validations", {"token": self.grant()})
        self.assertEqual(status, 200)
        self.assertEqual(set(answer["data"]), {"endUserId", "userJwt"})
        self.assertEqual(answer["data"]["endUserId"], step["endUserId"])
        status, current = self.client.json("GET", "/_emulator/totp?environmentId=env-demo&email=user%40example.com")
        self.assertEqual(status, 200)
        second = {"Authorization": "Bearer " + answer["data"]["userJwt"]}
        self.assertEqual(self.portal("POST", "/totps/validations", {"code": current["code"]}, **second)[0], 200)
        sessions = self.client.json("GET", "/_emulator/sessions")[1]["sessions"]
        self.assertEqual([entry["via"] for entry in sessions], ["totp", "totp"])
        self.assertEqual(sessions[0]["clientSessionToken"], session["clientSessionToken"])

    def test_totp_rejections(self):
        answer = self.portal("POST", "/magic-links/validations", {"token": self.grant()})[1]["data"]
        user_jwt = answer["userJwt"]
        code = self.client.json("GET", "/_emulator/totp?environmentId=env-demo&email=user%40example.com")[1]["code"]
        self.assertEqual(self.portal("POST", "/totps/validations", {"code": code})[0], 401)
        self.assertEqual(self.portal("POST", "/totps/validations", {"code": code}, Authorization="Basic x")[0], 401)
        head, body, sig = user_jwt.split(".")
        tampered = f"{head}.{body}.{sig[:-2]}AA"
        self.assertEqual(self.portal("POST", "/totps/validations", {"code": code}, Authorization="Bearer " + tampered)[0], 401)
        # Another environment's header does not accept this JWT.
        self.assertEqual(
            self.portal("POST", "/totps/validations", {"code": code}, env="env-open", Authorization="Bearer " + user_jwt)[0], 401
        )
        self.assertEqual(self.portal("POST", "/totps/validations", {"code": 123456}, Authorization="Bearer " + user_jwt)[0], 400)
        # Expired: move the emulator clock past the ten minutes.
        self.client.json("POST", "/_emulator/control", {"clockOffsetSeconds": 601})
        code = self.client.json("GET", "/_emulator/totp?environmentId=env-demo&email=user%40example.com")[1]["code"]
        self.assertEqual(
            self.portal("POST", "/totps/validations", {"code": code}, Authorization="Bearer " + user_jwt),
            (401, {"error": "invalid userJwt"}),
        )
        # Its answers' Date follows its clock.
        _, headers, _ = self.client.call("GET", API + "/methods", headers=portal_headers())
        sent = email.utils.parsedate_to_datetime(headers["Date"]).timestamp()
        self.assertTrue(590 <= sent - time.time() <= 602, headers["Date"])

    def test_no_totp_environment_signs_in_directly(self):
        token = self.grant(env="env-open", isAccountAbstracted=True)
        status, answer = self.portal("POST", "/magic-links/validations", {"token": token}, env="env-open")
        self.assertEqual(status, 200)
        data = answer["data"]
        self.assertEqual(set(data), {"endUserId", "clientId", "clientSessionToken", "isAccountAbstracted"})
        self.assertRegex(data["clientId"], r"^cl_[0-9a-f]+$")
        self.assertTrue(data["isAccountAbstracted"])

    def test_grant_kind_and_environment_must_match(self):
        magic = self.grant()
        self.assertEqual(self.portal("POST", "/oauth/tokens", {"token": magic}), (401, {"error": "invalid grant"}))
        self.assertEqual(self.portal("POST", "/magic-links/validations", {"token": magic}, env="env-open")[0], 401)
        self.assertEqual(self.portal("POST", "/magic-links/validations", {"token": "made-up"})[0], 401)
        # None of these spent it.
        self.assertEqual(self.portal("POST", "/magic-links/validations", {"token": magic})[0], 200)

    def test_send_validation(self):
        cases = [
            ({"email": None}, "null field"),
            ({"isAccountAbstracted": None}, "null field"),
            ({"email": "  "}, "email is required"),
            ({"fromEmail": ""}, "fromEmail is required"),
            ({"templateId": 7}, "templateId is required"),
            ({"redirectUrl": CALLBACK + "/"}, "redirect URL not allowed"),
            ({"isAccountAbstracted": True}, "Gas sponsorship is not enabled for this environment."),
            ({"authMethod": "x"}, "unexpected field authMethod"),
        ]
        for extra, message in cases:
            with self.subTest(extra):
                self.assertEqual(self.send_link(**extra), (400, {"error": message}))
        body = {"email": "a@b.c", "fromEmail": "f", "templateId": "t"}
        self.assertEqual(self.portal("POST", "/magic-links", body), (400, {"error": "redirectUrl is required"}))
        self.assertEqual(self.send_link(env="env-open", isAccountAbstracted=True), (200, {"data": {}}))
        self.assertEqual(self.client.json("GET", "/_emulator/outbox")[1]["messages"][0]["environmentId"], "env-open")

    def test_link_keeps_existing_query_and_fragment(self):
        self.client.json("POST", "/_emulator/environments", {
            "id": "env-q", "allowedMethods": ["EMAIL_MAGIC_LINK"], "redirectUrls": ["https://app.example/cb?x=1#top"],
        })
        body = {"email": "q@example.com", "redirectUrl": "https://app.example/cb?x=1#top", "fromEmail": "f", "templateId": "t"}
        self.assertEqual(self.portal("POST", "/magic-links", body, env="env-q")[0], 200)
        link = self.client.json("GET", "/_emulator/outbox")[1]["messages"][0]["link"]
        self.assertRegex(link, r"^https://app\.example/cb\?x=1&token=mlg_[0-9a-f]+&authMethod=EMAIL_MAGIC_LINK#top$")

    def test_rate_limit(self):
        for _ in range(5):
            self.assertEqual(self.send_link()[0], 200)
        self.assertEqual(self.send_link(), (429, {"error": "rate limited"}))
        self.assertEqual(self.send_link(email="USER@example.com")[0], 429)
        self.assertEqual(self.send_link(email="other@example.com")[0], 200)
        self.assertEqual(self.send_link(env="env-open")[0], 200)
        self.client.json("POST", "/_emulator/reset")
        self.assertEqual(self.send_link()[0], 200)


class OAuthTests(EmulatorTestCase):
    def test_query_encoding_is_checked(self):
        good = "redirectUrl=" + encode_query_value(CALLBACK)
        self.assertEqual(good, "redirectUrl=myapp%3A%2F%2Fauth%2Fcallback")
        self.assertEqual(self.oauth_urls(good)[0], 200)
        self.assertEqual(self.oauth_urls(good + "&isAccountAbstracted=false")[0], 200)
        mismatch = {"error": "redirectUrl is not encoded as expected"}
        for query in (
            "redirectUrl=myapp://auth/callback",
            "redirectUrl=myapp%3a%2f%2fauth%2fcallback",
            "redirectUrl=myapp%3A%2F%2Fauth%2Fcall%62ack",
            "isAccountAbstracted=false&" + good,
        ):
            with self.subTest(query):
                self.assertEqual(self.oauth_urls(query), (400, mismatch))
        self.assertEqual(self.oauth_urls(good + "&isAccountAbstracted=TRUE")[0], 400)
        self.assertEqual(self.oauth_urls("")[0], 400)
        other = "redirectUrl=" + encode_query_value("myapp://other")
        self.assertEqual(self.oauth_urls(other), (400, {"error": "redirect URL not allowed"}))
        self.assertEqual(
            self.oauth_urls(good + "&isAccountAbstracted=true"),
            (400, {"error": "Gas sponsorship is not enabled for this environment."}),
        )
        status, answer = self.oauth_urls(good + "&isAccountAbstracted=true", env="env-open")
        self.assertEqual((status, set(answer["data"])), (200, {"google"}))

    def test_encoder_escapes_everything_but_the_safe_set(self):
        self.assertEqual(encode_query_value("a b+~*._-é"), "a%20b%2B%7E*._-%C3%A9")

    def authorize(self, url, extra=""):
        parts = urlsplit(url)
        status, headers, _ = self.client.call("GET", f"{parts.path}?{parts.query}{extra}")
        return status, headers.get("Location")

    def test_provider_round_trip(self):
        urls = self.oauth_urls("redirectUrl=" + encode_query_value(CALLBACK))[1]["data"]
        self.assertEqual(set(urls), {"google", "apple"})
        self.assertTrue(urls["google"].startswith(self.base + "/_emulator/oauth/google/authorize?state="))
        status, location = self.authorize(urls["google"], "&email=g@example.com")
        self.assertEqual(status, 302)
        query = parse_qs(urlsplit(location).query)
        self.assertEqual(query["login_type"], ["GOOGLE"])
        self.assertTrue(location.startswith(CALLBACK + "?token="))
        # The state is shared by both providers and single-use.
        self.assertEqual(self.authorize(urls["apple"])[0], 400)
        status, answer = self.portal("POST", "/oauth/tokens", {"token": query["token"][0]})
        self.assertEqual(status, 200)
        self.assertIn("totpLink", answer["data"])
        self.assertEqual(self.portal("POST", "/oauth/tokens", {"token": query["token"][0]})[0], 401)

    def test_provider_error_outcome(self):
        urls = self.oauth_urls("redirectUrl=" + encode_query_value(CALLBACK))[1]["data"]
        self.assertEqual(self.authorize(urls["apple"], "&outcome=error"), (302, CALLBACK + "?error=oauth_failed"))
        self.client.json("POST", "/_emulator/control", {"oauthOutcome": "error"})
        urls = self.oauth_urls("redirectUrl=" + encode_query_value(CALLBACK))[1]["data"]
        self.assertEqual(self.authorize(urls["google"]), (302, CALLBACK + "?error=oauth_failed"))
        self.assertEqual(self.authorize(self.base + "/_emulator/oauth/google/authorize?state=unknown")[0], 400)

    def test_provider_error_text(self):
        # The provider's error text, from the query or the control, percent-encoded in the redirect.
        urls = self.oauth_urls("redirectUrl=" + encode_query_value(CALLBACK))[1]["data"]
        self.assertEqual(self.authorize(urls["google"], "&outcome=error&error=%3Cb%3E%20no"),
                         (302, CALLBACK + "?error=%3Cb%3E%20no"))
        status, controls = self.client.json("POST", "/_emulator/control",
                                            {"oauthOutcome": "error", "oauthError": 'denied <x> & "y"'})
        self.assertEqual((status, controls["oauthError"]), (200, 'denied <x> & "y"'))
        urls = self.oauth_urls("redirectUrl=" + encode_query_value(CALLBACK))[1]["data"]
        self.assertEqual(self.authorize(urls["apple"]), (302, CALLBACK + "?error=denied%20%3Cx%3E%20%26%20%22y%22"))
        self.assertEqual(self.client.json("POST", "/_emulator/control", {"oauthError": ""})[0], 400)
        self.client.json("POST", "/_emulator/reset")
        self.assertEqual(self.client.json("GET", "/_emulator/control")[1]["oauthError"], "oauth_failed")


class FaultAndWaitTests(EmulatorTestCase):
    def fault(self, **spec):
        status, _ = self.client.json("POST", "/_emulator/faults", spec)
        self.assertEqual(status, 200)

    def test_latency(self):
        self.fault(path="/methods", kind="latency", ms=150)
        started = time.monotonic()
        self.assertEqual(self.portal("GET", "/methods")[0], 200)
        self.assertGreaterEqual(time.monotonic() - started, 0.15)

    def test_status_and_count(self):
        self.fault(path=API + "/methods", kind="status", status=503, count=2)
        self.assertEqual(self.portal("GET", "/methods"), (503, {"error": "injected"}))
        self.assertEqual(self.portal("GET", "/methods")[0], 503)
        self.assertEqual(self.portal("GET", "/methods")[0], 200)
        self.fault(path="/methods", kind="status", status=500, body='{"error":"boom"}', count=0)
        for _ in range(3):
            self.assertEqual(self.portal("GET", "/methods"), (500, {"error": "boom"}))
        self.client.json("DELETE", "/_emulator/faults")
        self.assertEqual(self.portal("GET", "/methods")[0], 200)

    def test_status_with_retry_after(self):
        self.fault(path="/methods", kind="status", status=429, retryAfter="120")
        status, headers, _ = self.client.call("GET", API + "/methods", headers=portal_headers())
        self.assertEqual((status, headers.get("Retry-After")), (429, "120"))
        status, headers, _ = self.client.call("GET", API + "/methods", headers=portal_headers())
        self.assertEqual((status, headers.get("Retry-After")), (200, None))
        status, _ = self.client.json("POST", "/_emulator/faults",
                                     {"path": "/methods", "kind": "status", "status": 503, "retryAfter": "1\r\nX: y"})
        self.assertEqual(status, 400)

    def test_malformed(self):
        self.fault(path="/methods", kind="malformed", body="<html>not json")
        status, headers, raw = self.client.call("GET", API + "/methods", headers=portal_headers())
        self.assertEqual((status, raw), (200, b"<html>not json"))

    def test_status_fault_does_not_consume_the_grant(self):
        token = self.grant()
        self.fault(path="/magic-links/validations", kind="status", status=502)
        self.assertEqual(self.portal("POST", "/magic-links/validations", {"token": token})[0], 502)
        self.assertEqual(self.portal("POST", "/magic-links/validations", {"token": token})[0], 200)

    def test_drop(self):
        self.fault(path="/methods", kind="drop")
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
            self.portal("GET", "/methods")
        self.assertEqual(len(self.client.json("GET", "/_emulator/requests")[1]["requests"]), 1)
        self.assertEqual(self.portal("GET", "/methods")[0], 200)

    def test_lost_acts_on_the_request_and_drops_its_answer(self):
        token = self.grant()
        self.fault(path="/magic-links/validations", kind="lost")
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
            self.portal("POST", "/magic-links/validations", {"token": token})
        self.assertEqual(self.portal("POST", "/magic-links/validations", {"token": token})[0], 401)

    def test_hold_and_release(self):
        self.fault(path="/magic-links/validations", kind="hold")
        token = self.grant()
        outcome = {}
        worker = threading.Thread(
            target=lambda: outcome.update(result=self.portal("POST", "/magic-links/validations", {"token": token}))
        )
        worker.start()
        status, answer = self.client.json("GET", f"/_emulator/wait?path={API}/magic-links/validations&count=1&timeout=10")
        self.assertEqual((status, answer), (200, {"count": 1}))
        self.assertTrue(worker.is_alive())  # on the wire, held
        self.assertNotIn("result", outcome)
        self.assertEqual(self.client.json("POST", "/_emulator/release")[0], 200)
        worker.join(30)
        self.assertFalse(worker.is_alive())
        self.assertEqual(outcome["result"][0], 200)

    def test_truncated(self):
        self.fault(path="/methods", kind="truncated", body='{"data":')
        connection = self.client.connection()
        connection.request("GET", API + "/methods", headers=portal_headers())
        response = connection.getresponse()
        self.assertEqual((response.status, response.getheader("Content-Length")), (200, str(len('{"data":') + 1024)))
        with self.assertRaises(http.client.IncompleteRead) as raised:
            response.read()
        self.assertEqual(raised.exception.partial, b'{"data":')
        connection.close()
        self.assertEqual(self.portal("GET", "/methods")[0], 200)

    def test_oversized(self):
        self.fault(path="/methods", kind="oversized")
        status, _, raw = self.client.call("GET", API + "/methods", headers=portal_headers())
        self.assertEqual((status, len(raw)), (200, 10 << 20))
        self.assertEqual(json.loads(raw)["data"]["pad"], "x" * ((10 << 20) - 19))
        self.fault(path="/methods", kind="oversized", size=1024)
        self.assertEqual(len(self.client.call("GET", API + "/methods", headers=portal_headers())[2]), 1024)

    def test_wait_blocks_until_the_request_arrives(self):
        waited = {}
        waiter = threading.Thread(
            target=lambda: waited.update(result=self.client.json("GET", "/_emulator/wait?path=/methods&count=2&timeout=20"))
        )
        waiter.start()
        self.portal("GET", "/methods")
        self.portal("GET", "/methods")
        waiter.join(30)
        self.assertEqual(waited["result"], (200, {"count": 2}))

    def test_wait_times_out(self):
        self.portal("GET", "/methods")
        self.assertEqual(self.client.json("GET", "/_emulator/wait?path=/methods&count=2&timeout=0.2"), (408, {"count": 1}))
        self.assertEqual(self.client.json("GET", "/_emulator/wait?count=1")[0], 400)

    def test_bad_fault_specs(self):
        for spec in ({"path": "/methods", "kind": "nope"}, {"path": "/methods", "kind": "latency"},
                     {"path": "/methods", "kind": "status", "status": 99}, {"kind": "drop"},
                     {"path": "/methods", "kind": "oversized", "size": 1023}):
            with self.subTest(spec):
                self.assertEqual(self.client.json("POST", "/_emulator/faults", spec)[0], 400)


def listen_on(port):
    """A socket listening on 127.0.0.1:`port`; close it when done."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", port))
    listener.listen()
    return listener


class LoopbackPortTests(EmulatorTestCase):
    def loopback_port(self):
        status, answer = self.client.json("GET", "/_emulator/loopback-port")
        self.assertEqual(status, 200)
        self.assertIn(answer["port"], PORTS)
        return answer["port"]

    def test_the_ports_handed_out_differ_and_a_listener_binds_each(self):
        first, second = self.loopback_port(), self.loopback_port()
        self.assertNotEqual(first, second)
        with listen_on(first), listen_on(second):
            pass

    def test_callers_at_the_same_time_get_ports_of_their_own(self):
        ports = []
        callers = [threading.Thread(target=lambda: ports.append(self.loopback_port())) for _ in range(16)]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(30)
        self.assertEqual(len(set(ports)), 16)

    def test_a_port_someone_listens_on_is_skipped(self):
        taken = self.loopback_port()
        with listen_on(taken):
            self.assertIsNone(LoopbackPorts(range(taken, taken + 1), start=0).take())
            handed = LoopbackPorts(range(taken, taken + 100), start=0).take()
            self.assertNotEqual(handed, taken)
            self.assertIn(handed, range(taken, taken + 100))
        self.assertEqual(LoopbackPorts(range(taken, taken + 1), start=0).take(), taken)

    def test_the_search_starts_over_at_the_end_of_the_range(self):
        taken = self.loopback_port()
        ports = LoopbackPorts(range(taken, taken + 1), start=0)
        self.assertEqual((ports.take(), ports.take()), (taken, taken))


class LifecycleTests(unittest.TestCase):
    def test_stop_releases_held_requests_and_closes_connections(self):
        emulator = Emulator({"environments": [{"id": "only", "allowedMethods": ["GOOGLE"]}]})
        client = Client(emulator.start())
        idle = client.connection()
        self.assertEqual(client.json("GET", API + "/methods", headers=portal_headers("only"), conn=idle),
                         (200, {"data": {"allowedAuthMethods": ["GOOGLE"], "autoCreateWallet": False}}))
        client.json("POST", "/_emulator/faults", {"path": "/methods", "kind": "hold"})
        outcome = {}

        def held_call():
            try:
                outcome["result"] = client.json("GET", API + "/methods", headers=portal_headers("only"))
            # Released by the stop: the connection closes, before the reply or inside it.
            except (OSError, http.client.HTTPException) as exc:
                outcome["result"] = exc

        worker = threading.Thread(target=held_call)
        worker.start()
        self.assertEqual(client.json("GET", "/_emulator/wait?path=/methods&count=2")[0], 200)
        emulator.stop()
        worker.join(30)
        self.assertFalse(worker.is_alive())
        with self.assertRaises(OSError):
            client.json("GET", API + "/methods", headers=portal_headers("only"), conn=idle)
        idle.close()


class CliTests(unittest.TestCase):
    def test_cli_prints_url_serves_and_stops_on_sigterm(self):
        env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
        process = subprocess.Popen(
            [sys.executable, "-m", "portal_auth_emulator", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
        )
        try:
            line = process.stdout.readline()
            match = re.fullmatch(r"portal-auth-emulator listening on (http://127\.0\.0\.1:(\d+))\n", line)
            self.assertIsNotNone(match, line)
            client = Client(match.group(1))
            status, answer = client.json(
                "POST", "/_emulator/grants", {"environmentId": "env-demo", "email": "c@example.com", "kind": "magic"}
            )
            grant = answer["token"]
            status, answer = client.json("POST", API + "/magic-links/validations", {"token": grant}, portal_headers())
            self.assertEqual(status, 200)
        finally:
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 0)
        self.assertIn("POST /api/v3/auth/magic-links/validations 200", stderr)
        for secret in (grant, answer["data"]["userJwt"], answer["data"]["totpLink"], "secret="):
            self.assertNotIn(secret, stderr)


if __name__ == "__main__":
    unittest.main()
