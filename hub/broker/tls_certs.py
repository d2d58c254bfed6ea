"""Certificates for the hall network's optional TLS (`tabletimer broker config
--tls`): an event's own certificate authority and the broker's certificate
signed by it, for the addresses boards connect to.  Boards carry the CA
certificate (`tabletimer board flash --broker-ca`) and accept only a broker
whose certificate it signed, for the host name or address they dial.

Made with `cryptography` (P-256 keys: small certificates, a quick handshake
on an ESP32); nothing here writes files (mosquitto_config.py does)."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
from dataclasses import dataclass
from typing import cast

CA_DAYS = 400                 # an event's CA: a season's events, then a new one
SERVER_DAYS = 400


@dataclass
class Pem:
    cert: bytes
    key: bytes


def _name(cn: str):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_ca(title: str = "TableTimer event CA", now: dt.datetime | None = None) -> Pem:
    """A new CA certificate and its key (PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    now = now or dt.datetime.now(dt.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name(title)).issuer_name(_name(title))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False, key_agreement=False,
                                         key_cert_sign=True, crl_sign=True, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    return Pem(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def make_server_cert(ca: Pem, hosts: list[str], now: dt.datetime | None = None) -> Pem:
    """The broker's certificate for hosts (IP addresses and/or DNS names:
    what boards are flashed with as --broker-host), signed by ca."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPrivateKeyTypes  # noqa: F401
    from cryptography.x509.oid import ExtendedKeyUsageOID

    if not hosts:
        raise ValueError("the broker's certificate needs the address boards connect to (--tls-host)")
    now = now or dt.datetime.now(dt.timezone.utc)
    ca_cert = x509.load_pem_x509_certificate(ca.cert)
    # a key that signs (make_ca's: P-256; load_pem_private_key's type names any kind)
    ca_key = cast("CertificateIssuerPrivateKeyTypes", serialization.load_pem_private_key(ca.key, None))
    names: list = []
    for h in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            names.append(x509.DNSName(h))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name(hosts[0])).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=SERVER_DAYS))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return Pem(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def _key_pem(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def board_ca(cert_pem: bytes) -> str:
    """The CA certificate as a board's configuration carries it: DER in
    base64 (MicroPython's SSLContext.load_verify_locations(cadata=) takes
    DER; a few hundred bytes, read once at boot)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
    except ValueError as e:
        raise ValueError(f"not a PEM certificate: {e}") from e
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()
