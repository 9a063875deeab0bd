"""S3 settings under Iceberg's property names, and the one S3 call pyarrow cannot make.

pyarrow's S3 file system does the bulk of the work (see ``arrowfs``). A conditional PUT
(``If-None-Match: *``), which makes an exclusive create atomic, is not in pyarrow's API, so
``put_if_absent`` sends it through botocore (an optional dependency: ``pip install boto3``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from icefloe._util.redaction import hide_in_library_logs
from icefloe.errors import (
    FileAlreadyExistsError,
    FileIOError,
    MissingDependencyError,
    UnsupportedFeatureError,
    ValidationError,
)

__all__ = ["S3_SCHEMES", "S3Config", "put_if_absent", "split_s3_location"]

S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})

# Iceberg's property names (Java's S3FileIOProperties / AwsClientProperties).
ENDPOINT = "s3.endpoint"
ACCESS_KEY_ID = "s3.access-key-id"
SECRET_ACCESS_KEY = "s3.secret-access-key"
SESSION_TOKEN = "s3.session-token"
REGION = "s3.region"
CLIENT_REGION = "client.region"
PATH_STYLE_ACCESS = "s3.path-style-access"
# Java's S3FileIOProperties: retries after the first attempt of each request, on throttling
# (503 SlowDown), 500s and cut connections, with the SDK's exponential backoff and jitter.
RETRY_NUM_RETRIES = "s3.retry.num-retries"
DEFAULT_RETRY_NUM_RETRIES = 5

# S3 answers a conditional write that races another one in flight with 409; retrying is the
# documented remedy, and the retry then normally sees the winner (412).
_CONFLICT_RETRIES = 4


def split_s3_location(location: str) -> tuple[str, str, str]:
    """``s3://bucket/key`` (or ``s3a://``, ``s3n://``) to ``(scheme, bucket, key)``.

    Raises:
        ValidationError: not an S3 location, or no bucket.
    """
    scheme, sep, rest = location.partition("://")
    if not sep or scheme.lower() not in S3_SCHEMES:
        raise ValidationError(f"Not an S3 location (s3://, s3a://, s3n://): {location}")
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise ValidationError(f"S3 location has no bucket: {location}")
    return scheme.lower(), bucket, key


def _parse_bool(properties: Mapping[str, str], name: str) -> bool | None:
    value = properties.get(name)
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise ValidationError(f"Property '{name}' must be 'true' or 'false', not '{value}'")
    return lowered == "true"


def _parse_count(properties: Mapping[str, str], name: str, default: int) -> int:
    value = properties.get(name)
    if value is None or not value.strip():
        return default
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < 0:
        raise ValidationError(f"Property '{name}' must be a count (0 or more), not '{value}'")
    return count


@dataclass(frozen=True, slots=True)
class S3Config:
    """S3 client settings, parsed once from Iceberg properties.

    Unset values fall back to the AWS SDK's defaults (environment, ``~/.aws``, instance
    metadata). ``path_style_access`` None keeps each client's own default.
    """

    endpoint: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None
    region: str | None = None
    path_style_access: bool | None = None
    num_retries: int = DEFAULT_RETRY_NUM_RETRIES

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> S3Config:
        """Read ``s3.endpoint``, ``s3.access-key-id``, ``s3.secret-access-key``,
        ``s3.session-token``, ``s3.region`` (or ``client.region``), ``s3.path-style-access`` and
        ``s3.retry.num-retries`` (default 5, as Java's).

        Raises:
            ValidationError: ``s3.path-style-access`` is not a boolean, or
                ``s3.retry.num-retries`` not a count.
        """
        return cls(
            endpoint=properties.get(ENDPOINT) or None,
            access_key_id=properties.get(ACCESS_KEY_ID) or None,
            secret_access_key=properties.get(SECRET_ACCESS_KEY) or None,
            session_token=properties.get(SESSION_TOKEN) or None,
            region=properties.get(REGION) or properties.get(CLIENT_REGION) or None,
            path_style_access=_parse_bool(properties, PATH_STYLE_ACCESS),
            num_retries=_parse_count(properties, RETRY_NUM_RETRIES, DEFAULT_RETRY_NUM_RETRIES),
        )

    def arrow_options(self) -> dict[str, Any]:
        """Keyword arguments for ``pyarrow.fs.S3FileSystem``."""
        options: dict[str, Any] = {}
        if self.endpoint:
            options["endpoint_override"] = self.endpoint
        if self.access_key_id:
            options["access_key"] = self.access_key_id
        if self.secret_access_key:
            options["secret_key"] = self.secret_access_key
        if self.session_token:
            options["session_token"] = self.session_token
        if self.region:
            options["region"] = self.region
        if self.path_style_access is not None:
            # pyarrow addresses path-style unless told otherwise.
            options["force_virtual_addressing"] = not self.path_style_access
        return options

    def arrow_retry_strategy(self) -> Any:
        """The AWS SDK's standard strategy for ``pyarrow.fs.S3FileSystem(retry_strategy=)``.

        It retries throttling (503 SlowDown), 5xx answers and transport errors (a cut
        connection) with exponential backoff and jitter, on every request: in the driver and in
        each task, since every process builds its own client from these properties.
        """
        import pyarrow.fs

        return pyarrow.fs.AwsStandardS3RetryStrategy(max_attempts=self.num_retries + 1)

    def botocore_client(self) -> Any:
        """A botocore S3 client with these settings.

        Raises:
            MissingDependencyError: botocore is not installed.
        """
        try:
            import botocore.config
            import botocore.session
        except ImportError as exc:
            raise MissingDependencyError(
                "Exclusive writes to S3 need botocore for a conditional PUT: pip install boto3"
            ) from exc
        endpoint = self.endpoint
        if endpoint and "://" not in endpoint:
            endpoint = f"https://{endpoint}"  # pyarrow's default scheme for a bare host:port
        style = {None: "auto", True: "path", False: "virtual"}[self.path_style_access]
        client = botocore.session.get_session().create_client(
            "s3",
            endpoint_url=endpoint,
            region_name=self.region,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            aws_session_token=self.session_token,
            config=botocore.config.Config(
                s3={"addressing_style": style},
                retries={"mode": "standard", "total_max_attempts": self.num_retries + 1},
            ),
        )
        # botocore logs signed requests (the session token in clear) at DEBUG.
        hide_in_library_logs("botocore", [self.secret_access_key or "", self.session_token or ""])
        return client


def put_if_absent(client: Any, location: str, data: bytes) -> None:
    """Create the object at ``location`` with ``data`` only if no object exists there.

    Sends ``PUT`` with ``If-None-Match: *``: the store decides atomically, so of concurrent
    writers exactly one succeeds, and an object is only ever visible complete.

    Raises:
        FileAlreadyExistsError: an object exists at ``location``.
        UnsupportedFeatureError: the store or the installed botocore does not support
            conditional writes.
        FileIOError: any other failure.
    """
    from botocore.exceptions import BotoCoreError, ClientError, ParamValidationError

    _, bucket, key = split_s3_location(location)
    for attempt in range(_CONFLICT_RETRIES + 1):
        try:
            client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
            return
        except ParamValidationError as exc:
            raise UnsupportedFeatureError(
                f"Cannot write {location} exclusively: the installed botocore has no conditional "
                f"PUT (If-None-Match); upgrade boto3/botocore"
            ) from exc
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            code = exc.response.get("Error", {}).get("Code")
            if status == 412 or code == "PreconditionFailed":
                retried = exc.response.get("ResponseMetadata", {}).get("RetryAttempts", 0)
                if retried and _holds(client, bucket, key, data):
                    # Our first attempt landed but its answer was lost; the SDK's retry then
                    # met our own object.
                    return
                raise FileAlreadyExistsError(
                    f"Cannot create {location}: it already exists", location=location
                ) from exc
            if status == 409 and attempt < _CONFLICT_RETRIES:
                time.sleep(0.05 * 2**attempt)
                continue
            if status == 501 or code == "NotImplemented":
                raise UnsupportedFeatureError(
                    f"Cannot write {location} exclusively: the S3 endpoint does not support "
                    f"conditional writes (If-None-Match)"
                ) from exc
            raise FileIOError(f"Failed to write {location}: {code} (HTTP {status})") from exc
        except BotoCoreError as exc:
            raise FileIOError(f"Failed to write {location}: {exc}") from exc


def _holds(client: Any, bucket: str, key: str, data: bytes) -> bool:
    try:
        return bool(client.get_object(Bucket=bucket, Key=key)["Body"].read() == data)
    except Exception:
        return False
