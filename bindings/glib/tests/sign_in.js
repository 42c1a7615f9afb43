// A GJS program on portal-auth-glib's introspection data: signs a new user in by magic link
// against the Portal emulator in PORTAL_AUTH_TEST_API_HOST, as an app would. It sends the
// link, opens it from the emulator's outbox (through libsoup), handles the redirect, enrolls
// TOTP (the QR code's modules checked, the code computed from the secret shown for manual
// entry), verifies the code, restores the session from a second client, and signs out; the
// calls are awaited as promises (Gio._promisify). Run by scripts/test-glib.sh as
// `gjs -m sign_in.js`; closes with "gjs: N passed, 0 failed".
import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import Soup from 'gi://Soup?version=3.0';
import PortalAuth from 'gi://PortalAuth?version=0';

const apiHost = GLib.getenv('PORTAL_AUTH_TEST_API_HOST');
const redirect = 'myapp://auth/callback';
let passed = 0, failed = 0;

function check(condition, what) {
    if (condition) {
        passed++;
        print(`ok: ${what}`);
    } else {
        failed++;
        printerr(`FAILED: ${what}`);
    }
}

for (const call of ['get_methods', 'send_magic_link', 'handle_redirect', 'verify_totp', 'restore_session',
    'clear_persisted_session'])
    Gio._promisify(PortalAuth.Client.prototype, `${call}_async`, `${call}_finish`);

const http = new Soup.Session();
function control(method, path, body) {
    const message = Soup.Message.new(method, `${apiHost}/_emulator/${path}`);
    if (body !== undefined)
        message.set_request_body_from_bytes('application/json', new GLib.Bytes(new TextEncoder().encode(JSON.stringify(body))));
    const answer = new TextDecoder().decode(http.send_and_read(message, null).get_data());
    return answer ? JSON.parse(answer) : {};
}

// RFC 6238 (SHA-1, 30 s, 6 digits) with GLib's HMAC, as the user's authenticator app computes it.
function totpCode(secret, seconds) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    const key = [];
    let bits = 0, value = 0;
    for (const character of secret.replace(/=+$/, '')) {
        value = value << 5 | alphabet.indexOf(character);
        bits += 5;
        if (bits >= 8) {
            key.push(value >>> (bits - 8) & 0xff);
            bits -= 8;
        }
    }
    const counter = new Uint8Array(8);
    let step = Math.floor(seconds / 30);
    for (let i = 7; i >= 0; i--, step = Math.floor(step / 256))
        counter[i] = step % 256;
    const hex = GLib.compute_hmac_for_bytes(GLib.ChecksumType.SHA1, new GLib.Bytes(new Uint8Array(key)),
        new GLib.Bytes(counter));
    const digest = hex.match(/../g).map(pair => parseInt(pair, 16));
    const offset = digest[19] & 0x0f;
    const number = ((digest[offset] & 0x7f) << 24 | digest[offset + 1] << 16 | digest[offset + 2] << 8 | digest[offset + 3]) % 1000000;
    return String(number).padStart(6, '0');
}

function client(environment) {
    const made = new PortalAuth.Client({
        authEnvironmentId: environment, redirectUrl: redirect, apiHost,
        magicLinkFromEmail: 'hello@auth.example.com', magicLinkTemplateId: 'tmpl',
        storage: PortalAuth.StorageKind.KEYRING,
    });
    made.init(null);
    return made;
}

async function main() {
    const environment = `env-gjs-${GLib.uuid_string_random().slice(0, 10)}`;
    control('POST', 'environments', {
        id: environment, allowedMethods: ['EMAIL_MAGIC_LINK', 'APPLE'], redirectUrls: [redirect],
        totpRequired: true, accountAbstraction: false, autoCreateWallet: true,
    });
    try {
        PortalAuth.Client.new(' ', redirect);
        check(false, 'a blank environment id is refused');
    } catch (error) {
        check(error.matches(PortalAuth.error_quark(), PortalAuth.Error.INVALID_ARGUMENT) &&
              PortalAuth.Error.get_name(error) === 'auth_environment_id',
        'a blank environment id is PortalAuth.Error.INVALID_ARGUMENT, naming the option');
    }

    const auth = client(environment);
    const changes = [];
    auth.connect('session-changed', (_client, session) => changes.push(session));
    const methods = await auth.get_methods_async(null);
    check(methods.allowedAuthMethods.join() === 'EMAIL_MAGIC_LINK,APPLE' && methods.autoCreateWallet,
        "the environment's methods");

    const email = 'gjs-ada@example.com';
    check(await auth.send_magic_link_async(email, null), 'the magic link is sent');
    const messages = control('GET', `outbox?email=${encodeURIComponent(email)}`).messages;
    const link = messages[messages.length - 1].link;
    check(link.startsWith(`${redirect}?`), "the email's link leads to the redirect URL");

    const step = await auth.handle_redirect_async(link, null);
    check(step.kind === PortalAuth.ResultKind.TOTP_REQUIRED && step.session === null && changes.length === 0,
        "a new user's redirect asks for TOTP enrollment");
    const secret = step.get_totp_secret();
    check(step.totpLink.startsWith('otpauth://totp/') && step.totpLink.includes(secret),
        "the step's enrollment link and secret");

    const qr = step.get_qr_code();
    const modules = qr.modules.get_data();
    const rowBytes = (qr.side + 7) >> 3;
    let agree = modules.length === qr.side * rowBytes, dark = 0;
    for (let row = 0; row < qr.side; row++) {
        for (let column = 0; column < qr.side; column++) {
            const bit = modules[row * rowBytes + (column >> 3)] >> (7 - column % 8) & 1;
            agree &&= bit === (qr.is_dark(row, column) ? 1 : 0);
            dark += bit;
        }
    }
    check(agree && dark > 0 && qr.to_png(4).get_size() > 0, "the QR code's modules, a bit each, and its PNG");

    const now = Date.now() / 1000;
    check(step.totpExpiresAt >= now + 590 && step.totpExpiresAt <= now + 601, 'the step expires in ten minutes');
    const right = totpCode(secret, Date.now() / 1000);
    try {
        await auth.verify_totp_async(String((Number(right) + 500000) % 1000000).padStart(6, '0'), step.userJwt, null);
        check(false, 'a wrong code fails');
    } catch (error) {
        const reason = PortalAuth.Error.get_reason(error);
        check(error.matches(PortalAuth.error_quark(), PortalAuth.Error.UNAUTHORIZED) &&
              reason === PortalAuth.ErrorReason.TOTP_CODE_REJECTED &&
              PortalAuth.ErrorReason.get_user_message(reason).endsWith('.'),
        'a wrong code is UNAUTHORIZED, TOTP_CODE_REJECTED, with its sentence');
    }
    const typed = PortalAuth.normalize_totp_code(`${right.slice(0, 3)} ${right.slice(3)}`);
    check(typed === right && PortalAuth.normalize_totp_code('12345') === null, 'the typed code, tidied');
    const result = await auth.verify_totp_async(typed, step.userJwt, null);
    const session = result.get_session();
    check(result.kind === PortalAuth.ResultKind.AUTHENTICATED && session.endUserId.startsWith('eu_'),
        'the code from the secret signs the user in');
    check(changes.length === 1 && changes[0] === session && auth.session === session,
        'session-changed and the session property');
    check(session.get_token().length > 16, 'the session has its token');

    const later = client(environment);
    const restored = await later.restore_session_async(null);
    check(restored !== null && restored.endUserId === session.endUserId,
        'a second client restores the session from the keyring');

    check(await auth.clear_persisted_session_async(null), 'signing out');
    check(changes.length === 2 && changes[1] === null && auth.session === null, 'session-changed on signing out');
    check(await later.restore_session_async(null) === null, 'nothing to restore afterwards');
    try {
        await auth.verify_totp_async('000000', 'not.a.jwt', null);
        check(false, 'a malformed userJwt fails');
    } catch (error) {
        check(error.matches(PortalAuth.error_quark(), PortalAuth.Error.INVALID_USER_JWT) &&
              PortalAuth.Error.get_detail(error) !== null, 'PortalAuth.Error.INVALID_USER_JWT, with its detail');
    }
}

const loop = new GLib.MainLoop(null, false);
let status = 1;
main().then(() => {
    status = failed === 0 ? 0 : 1;
}, error => {
    printerr(`FAILED: ${error}\n${error.stack}`);
}).finally(() => loop.quit());
GLib.timeout_add_seconds(GLib.PRIORITY_DEFAULT, 120, () => {
    printerr('FAILED: the program did not finish in 120 s');
    loop.quit();
    return GLib.SOURCE_REMOVE;
});
loop.run();
print(`gjs: ${passed} passed, ${status === 0 ? failed : failed + 1} failed`);
imports.system.exit(status);
