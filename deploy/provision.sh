#!/usr/bin/env bash
# Provision the local backing services the platform's tests need:
#   - PostgreSQL 15 (Debian package) on 127.0.0.1:5432, user postgres / password postgres
#   - Redis (Debian package) on 127.0.0.1:6379
#   - a single-node KRaft Apache Kafka broker on 127.0.0.1:9092 (controller on 127.0.0.1:9093),
#     assembled from Maven Central artifacts and run with the system Java (17+); the same broker also
#     listens with SASL_SSL on 127.0.0.1:9094 (a test CA made with openssl; SCRAM-SHA-512/256 and PLAIN) and with
#     SSL on 127.0.0.1:9095 (mutual TLS: a client certificate signed by that CA required)
#   - Debian's chromium (headless browser for the page tests driven with playwright-core)
#   - optionally helm (built from its Go module) when PROVISION_HELM=1 or `--helm` is passed
#
# Idempotent: every step checks first and does nothing when already done, so a second run takes a
# few seconds. Downloads and state live under ${PLATFORM_CACHE_DIR:-$HOME/.cache/mcp-platform}.
# At the end the test variables are printed and written to ${PLATFORM_CACHE_DIR}/test.env.
#
# Targets Debian/Ubuntu machines without systemd (containers, CI); run as root or with sudo.
#
# Usage: bash deploy/provision.sh [--helm] [--no-kafka] [--stop]
#   --helm       also build/cache helm (same as PROVISION_HELM=1)
#   --no-kafka   skip Kafka (same as PROVISION_KAFKA=0)
#   --stop       stop the Kafka broker and Redis started by this script (PostgreSQL is left alone)
#
# Environment overrides: PLATFORM_CACHE_DIR, KAFKA_VERSION, HELM_VERSION, KAFKA_HEAP_OPTS,
#   PROVISION_HELM, PROVISION_KAFKA, KAFKA_READY_TIMEOUT (seconds).
set -euo pipefail

CACHE_DIR="${PLATFORM_CACHE_DIR:-$HOME/.cache/mcp-platform}"
# Newest 3.9.x on Maven Central at the time of writing (3.9.2); verified with
# `mvn dependency:get -Dartifact=org.apache.kafka:kafka_2.13:<v>:pom`.
KAFKA_VERSION="${KAFKA_VERSION:-3.9.2}"
SCALA_BINARY="2.13"
HELM_VERSION="${HELM_VERSION:-v3.21.4}"
# Bumped when the way helm is built changes, so cached binaries get rebuilt.
HELM_BUILD_ID="$HELM_VERSION build-2"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms128m -Xmx512m}"
KAFKA_READY_TIMEOUT="${KAFKA_READY_TIMEOUT:-90}"
PROVISION_HELM="${PROVISION_HELM:-0}"
PROVISION_KAFKA="${PROVISION_KAFKA:-1}"
DO_STOP=0

for arg in "$@"; do
  case "$arg" in
    --helm) PROVISION_HELM=1 ;;
    --no-helm) PROVISION_HELM=0 ;;
    --no-kafka) PROVISION_KAFKA=0 ;;
    --stop) DO_STOP=1 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "provision.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

PG_HOST=127.0.0.1
PG_PORT=5432
PG_PASSWORD=postgres
REDIS_PORT=6379
KAFKA_PORT=9092
KAFKA_CONTROLLER_PORT=9093
KAFKA_SASL_SSL_PORT=9094
KAFKA_SSL_PORT=9095
# TEST-ONLY credentials of the SASL_SSL listener (loopback only), like PostgreSQL's postgres/postgres above.
KAFKA_SASL_USERNAME=platform_test
KAFKA_SASL_PASSWORD=platform-test-password

KAFKA_HOME="$CACHE_DIR/kafka/$KAFKA_VERSION"
KAFKA_LIB="$KAFKA_HOME/lib"
KAFKA_STATE="$CACHE_DIR/kafka/state"
KAFKA_DATA="$KAFKA_STATE/data"
KAFKA_CONF="$KAFKA_STATE/server.properties"
KAFKA_LOG4J="$KAFKA_STATE/log4j.properties"
KAFKA_LOG="$KAFKA_STATE/kafka.log"
KAFKA_PID="$KAFKA_STATE/kafka.pid"
KAFKA_TLS_DIR="$KAFKA_STATE/tls"
REDIS_DIR="$CACHE_DIR/redis"
BIN_DIR="$CACHE_DIR/bin"

START_TS=$(date +%s)
step() { echo "==> $*"; }
info() { echo "    $*"; }
die() { echo "provision.sh: ERROR: $*" >&2; exit 1; }

mkdir -p "$CACHE_DIR" "$BIN_DIR"

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres -- "$@"; fi
}

# `apt-get update` at most once per run, and only when something must be installed.
APT_UPDATED=0
apt_install() {
  command -v apt-get >/dev/null || die "apt-get not found: install $* by hand (this script targets Debian/Ubuntu)"
  if [ "$APT_UPDATED" -eq 0 ]; then
    step "apt-get update"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    APT_UPDATED=1
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# TCP check without extra tools.
port_open() { (exec 3<>"/dev/tcp/$1/$2") >/dev/null 2>&1; }

wait_port() { # host port timeout_seconds
  local i
  for ((i = 0; i < $3 * 5; i++)); do
    port_open "$1" "$2" && return 0
    sleep 0.2
  done
  return 1
}

# ---------------------------------------------------------------------------------------------------
# --stop
# ---------------------------------------------------------------------------------------------------
if [ "$DO_STOP" -eq 1 ]; then
  if [ -f "$KAFKA_PID" ] && kill -0 "$(cat "$KAFKA_PID")" 2>/dev/null; then
    step "stopping Kafka (pid $(cat "$KAFKA_PID"))"
    kill "$(cat "$KAFKA_PID")"
    for _ in $(seq 1 60); do kill -0 "$(cat "$KAFKA_PID")" 2>/dev/null || break; sleep 0.5; done
    rm -f "$KAFKA_PID"
  fi
  if command -v redis-cli >/dev/null && redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    step "stopping Redis"
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  fi
  exit 0
fi

# ---------------------------------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------------------------------
pg_login_ok() {
  PGPASSWORD="$PG_PASSWORD" PGCONNECT_TIMEOUT=3 psql "host=$PG_HOST port=$PG_PORT user=postgres dbname=postgres" \
    -tAc 'select 1' >/dev/null 2>&1
}

if ! command -v pg_lsclusters >/dev/null || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  step "installing PostgreSQL (apt-get install postgresql)"
  apt_install postgresql
fi

# The newest installed major version (Debian bookworm ships 15).
PG_VERSION=$(ls /usr/lib/postgresql | sort -V | tail -1)
PG_CLUSTER=main
if ! pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1==v && $2==c {f=1} END {exit !f}'; then
  step "creating PostgreSQL $PG_VERSION cluster '$PG_CLUSTER'"
  $SUDO pg_createcluster "$PG_VERSION" "$PG_CLUSTER" >/dev/null
fi

PG_CONF_DIR="/etc/postgresql/$PG_VERSION/$PG_CLUSTER"
PG_TEST_CONF="$PG_CONF_DIR/conf.d/90-mcp-platform-test.conf"
# TEST-ONLY SETTINGS. fsync/synchronous_commit/full_page_writes=off trade crash safety for speed:
# a power loss or OS crash can corrupt this cluster. Never use them for data you care about.
PG_TEST_CONF_CONTENT="# Written by deploy/provision.sh -- TEST-ONLY settings, never use in production.
listen_addresses = '127.0.0.1'
port = $PG_PORT
# The test suite creates many connection pools.
max_connections = 400
# Durability off for test speed (unsafe: a crash can corrupt the cluster).
fsync = off
synchronous_commit = off
full_page_writes = off
"
PG_NEED_RESTART=0
if [ ! -f "$PG_TEST_CONF" ] || [ "$(cat "$PG_TEST_CONF")" != "$(printf '%s' "$PG_TEST_CONF_CONTENT")" ]; then
  step "configuring PostgreSQL ($PG_TEST_CONF)"
  $SUDO mkdir -p "$PG_CONF_DIR/conf.d"
  printf '%s' "$PG_TEST_CONF_CONTENT" | $SUDO tee "$PG_TEST_CONF" >/dev/null
  # Debian's postgresql.conf includes conf.d; make sure it does.
  if ! grep -Eq "^[[:space:]]*include_dir[[:space:]]*=[[:space:]]*'conf.d'" "$PG_CONF_DIR/postgresql.conf"; then
    echo "include_dir = 'conf.d'" | $SUDO tee -a "$PG_CONF_DIR/postgresql.conf" >/dev/null
  fi
  PG_NEED_RESTART=1
fi
# Password auth over TCP from loopback (Debian's default pg_hba already has it; add it if missing).
PG_HBA="$PG_CONF_DIR/pg_hba.conf"
if ! grep -Eq '^[[:space:]]*host[[:space:]]+all[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+(scram-sha-256|md5)' "$PG_HBA"; then
  step "enabling password auth for 127.0.0.1 in $PG_HBA"
  echo "host all all 127.0.0.1/32 scram-sha-256" | $SUDO tee -a "$PG_HBA" >/dev/null
  PG_NEED_RESTART=1
fi

pg_running() { pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1==v && $2==c && $4 ~ /^online/ {f=1} END {exit !f}'; }
if pg_running; then
  if [ "$PG_NEED_RESTART" -eq 1 ]; then
    step "restarting PostgreSQL $PG_VERSION/$PG_CLUSTER to apply configuration"
    $SUDO pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" restart
  fi
else
  step "starting PostgreSQL $PG_VERSION/$PG_CLUSTER"
  $SUDO pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start
fi
wait_port "$PG_HOST" "$PG_PORT" 30 || die "PostgreSQL is not listening on $PG_HOST:$PG_PORT; see /var/log/postgresql/"

if ! pg_login_ok; then
  step "setting the postgres user's password"
  as_postgres psql -q -p "$PG_PORT" -d postgres -c "ALTER USER postgres WITH PASSWORD '$PG_PASSWORD'"
  pg_login_ok || die "cannot log in to PostgreSQL at $PG_HOST:$PG_PORT as postgres/$PG_PASSWORD"
fi
PG_MAXCONN=$(PGPASSWORD="$PG_PASSWORD" psql "host=$PG_HOST port=$PG_PORT user=postgres dbname=postgres" -tAc 'show max_connections')
[ "$PG_MAXCONN" -ge 300 ] || die "PostgreSQL max_connections is $PG_MAXCONN (< 300); another setting overrides $PG_TEST_CONF"
info "PostgreSQL $PG_VERSION ready on $PG_HOST:$PG_PORT (max_connections=$PG_MAXCONN)"

# ---------------------------------------------------------------------------------------------------
# Redis
# ---------------------------------------------------------------------------------------------------
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  step "installing Redis (apt-get install redis-server)"
  apt_install redis-server redis-tools
fi
if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then
  step "starting Redis on 127.0.0.1:$REDIS_PORT"
  mkdir -p "$REDIS_DIR"
  # No persistence: the tests only need a scratch Redis.
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$REDIS_DIR" \
    --save '' --appendonly no --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log"
  for _ in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break
    sleep 0.2
  done
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG \
    || { tail -n 30 "$REDIS_DIR/redis.log" >&2 || true; die "Redis did not start"; }
fi
info "Redis ready on 127.0.0.1:$REDIS_PORT"

# ---------------------------------------------------------------------------------------------------
# Chromium (Debian's package; the e2e page tests drive it with playwright-core, which downloads nothing)
# ---------------------------------------------------------------------------------------------------
# openssl makes the self-signed certificates of the https test servers (client metadata documents) and Kafka's test CA.
if ! command -v openssl >/dev/null; then
  step "installing openssl"
  apt_install openssl
fi

if [ ! -x /usr/bin/chromium ]; then
  step "installing Chromium (apt-get install chromium)"
  apt_install chromium
  [ -x /usr/bin/chromium ] || die "apt-get install chromium did not produce /usr/bin/chromium"
fi
info "Chromium ready: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"

# ---------------------------------------------------------------------------------------------------
# Kafka (KRaft, single node, from Maven Central)
# ---------------------------------------------------------------------------------------------------
kafka_java() { java $KAFKA_HEAP_OPTS -Djava.awt.headless=true -Dlog4j.configuration="file:$KAFKA_LOG4J" -cp "$KAFKA_LIB/*" "$@"; }

if [ "$PROVISION_KAFKA" = "1" ]; then
  if ! command -v java >/dev/null; then
    step "installing Java (apt-get install openjdk-17-jre-headless)"
    apt_install openjdk-17-jre-headless
  fi
  if [ ! -f "$KAFKA_LIB/.complete" ]; then
    if ! command -v mvn >/dev/null; then
      step "installing Maven (apt-get install maven)"
      apt_install maven
    fi
    step "resolving Apache Kafka $KAFKA_VERSION (kafka_$SCALA_BINARY) and its runtime dependencies with Maven"
    rm -rf "$KAFKA_LIB" "$KAFKA_HOME/pom"
    mkdir -p "$KAFKA_HOME/pom"
    cat >"$KAFKA_HOME/pom/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.mcp-platform</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <!-- the broker (kafka.Kafka, kafka.tools.StorageTool) -->
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_$SCALA_BINARY</artifactId><version>$KAFKA_VERSION</version></dependency>
    <!-- org.apache.kafka.tools.TopicCommand, used for the readiness check -->
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
    <!-- an slf4j binding so the broker logs (Kafka 3.9's own distribution uses reload4j) -->
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
EOF
    mvn -q -B -Dstyle.color=never -f "$KAFKA_HOME/pom/pom.xml" -Dmaven.repo.local="$CACHE_DIR/m2" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIB"
    [ -n "$(ls "$KAFKA_LIB"/kafka_"$SCALA_BINARY"-"$KAFKA_VERSION".jar 2>/dev/null)" ] || die "Maven did not produce the Kafka jars in $KAFKA_LIB"
    touch "$KAFKA_LIB/.complete"
    info "$(ls "$KAFKA_LIB"/*.jar | wc -l) jars in $KAFKA_LIB"
  fi

  mkdir -p "$KAFKA_STATE"
  cat >"$KAFKA_LOG4J.tmp" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.kafka.log=WARN
log4j.logger.kafka.cluster=WARN
log4j.logger.kafka.coordinator.group=WARN
log4j.logger.org.apache.kafka.storage=WARN
EOF
  mv "$KAFKA_LOG4J.tmp" "$KAFKA_LOG4J"

  # The SASL_SSL and SSL listeners' TLS: a private test CA, a server certificate for 127.0.0.1 and a client certificate
  # (the mutual-TLS listener's test client) signed by it, made once and again when a file is missing, they no longer
  # match or any expires within 30 days. Kafka reads the key and chain as a PEM keystore; clients trust the CA
  # (TEST_KAFKA_CA_FILE). The CA's key is not kept.
  kafka_tls_ok() {
    [ -f "$KAFKA_TLS_DIR/ca.crt" ] && [ -f "$KAFKA_TLS_DIR/server.crt" ] && [ -f "$KAFKA_TLS_DIR/server.pem" ] \
      && [ -f "$KAFKA_TLS_DIR/client.crt" ] && [ -f "$KAFKA_TLS_DIR/client.key" ] && [ -f "$KAFKA_TLS_DIR/client.pem" ] \
      && openssl x509 -noout -checkend 2592000 -in "$KAFKA_TLS_DIR/ca.crt" >/dev/null \
      && openssl x509 -noout -checkend 2592000 -in "$KAFKA_TLS_DIR/server.crt" >/dev/null \
      && openssl x509 -noout -checkend 2592000 -in "$KAFKA_TLS_DIR/client.crt" >/dev/null \
      && openssl verify -CAfile "$KAFKA_TLS_DIR/ca.crt" "$KAFKA_TLS_DIR/server.crt" "$KAFKA_TLS_DIR/client.crt" >/dev/null 2>&1
  }
  if ! kafka_tls_ok; then
    step "making a test CA, the certificate of Kafka's TLS listeners and a client's in $KAFKA_TLS_DIR"
    rm -rf "$KAFKA_TLS_DIR"
    mkdir -p "$KAFKA_TLS_DIR"
    # && throughout: errexit does not apply inside a command followed by ||.
    (
      umask 077 && cd "$KAFKA_TLS_DIR" \
        && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
          -subj "/CN=mcp-platform test Kafka CA" \
          -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
        && openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1" \
        && printf '%s\n' subjectAltName=IP:127.0.0.1,DNS:localhost basicConstraints=CA:FALSE \
          keyUsage=critical,digitalSignature,keyEncipherment extendedKeyUsage=serverAuth >server.ext \
        && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" \
          -days 825 -extfile server.ext -out server.crt \
        && cat server.key server.crt ca.crt >server.pem \
        && openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=platform-mtls-test" \
        && printf '%s\n' basicConstraints=CA:FALSE keyUsage=critical,digitalSignature,keyEncipherment \
          extendedKeyUsage=clientAuth >client.ext \
        && openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" \
          -days 825 -extfile client.ext -out client.crt \
        && cat client.key client.crt >client.pem \
        && rm -f ca.key server.key server.csr server.ext client.csr client.ext \
        && chmod 644 ca.crt server.crt client.crt
    ) >"$KAFKA_STATE/openssl.log" 2>&1 || { tail -n 20 "$KAFKA_STATE/openssl.log" >&2; die "openssl could not make the Kafka test certificates"; }
    kafka_tls_ok || die "the Kafka test certificates in $KAFKA_TLS_DIR do not verify"
  fi
  KAFKA_TLS_FINGERPRINT=$(openssl x509 -noout -fingerprint -sha256 -in "$KAFKA_TLS_DIR/server.crt" | cut -d= -f2)

  cat >"$KAFKA_CONF.tmp" <<EOF
# Written by deploy/provision.sh: single-node KRaft broker+controller for local tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,SASL_SSL://127.0.0.1:$KAFKA_SASL_SSL_PORT,SSL://127.0.0.1:$KAFKA_SSL_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,SASL_SSL://127.0.0.1:$KAFKA_SASL_SSL_PORT,SSL://127.0.0.1:$KAFKA_SSL_PORT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL
# SASL_SSL (the platform's KAFKA_SSL and KAFKA_SASL_*): server-only TLS with the test CA's certificate (sha256
# $KAFKA_TLS_FINGERPRINT; a new one changes this file, which restarts the broker); SCRAM users live in the cluster
# metadata (added after start), the PLAIN user is listed here.
listener.name.sasl_ssl.ssl.keystore.type=PEM
listener.name.sasl_ssl.ssl.keystore.location=$KAFKA_TLS_DIR/server.pem
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$KAFKA_SASL_USERNAME="$KAFKA_SASL_PASSWORD";
# SSL (the platform's KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE): mutual TLS, a client certificate signed by the
# test CA required, as Strimzi's `tls` authentication and Aiven's default ask.
listener.name.ssl.ssl.keystore.type=PEM
listener.name.ssl.ssl.keystore.location=$KAFKA_TLS_DIR/server.pem
listener.name.ssl.ssl.truststore.type=PEM
listener.name.ssl.ssl.truststore.location=$KAFKA_TLS_DIR/ca.crt
listener.name.ssl.ssl.client.auth=required
log.dirs=$KAFKA_DATA
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
min.insync.replicas=1
default.replication.factor=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
log.retention.hours=24
log.segment.bytes=67108864
EOF
  KAFKA_CONF_CHANGED=0
  if ! cmp -s "$KAFKA_CONF.tmp" "$KAFKA_CONF"; then mv "$KAFKA_CONF.tmp" "$KAFKA_CONF"; KAFKA_CONF_CHANGED=1; else rm -f "$KAFKA_CONF.tmp"; fi

  kafka_pid_alive() { [ -f "$KAFKA_PID" ] && kill -0 "$(cat "$KAFKA_PID")" 2>/dev/null; }
  kafka_running_version() { [ -f "$KAFKA_STATE/running-version" ] && cat "$KAFKA_STATE/running-version"; }

  if kafka_pid_alive && { [ "$KAFKA_CONF_CHANGED" -eq 1 ] || [ "$(kafka_running_version)" != "$KAFKA_VERSION" ]; }; then
    step "restarting Kafka (configuration or version changed)"
    kill "$(cat "$KAFKA_PID")" || true
    for _ in $(seq 1 60); do kafka_pid_alive || break; sleep 0.5; done
    rm -f "$KAFKA_PID"
  fi

  KAFKA_STARTED=0
  if kafka_pid_alive && port_open 127.0.0.1 "$KAFKA_PORT"; then
    info "Kafka already running (pid $(cat "$KAFKA_PID")) on 127.0.0.1:$KAFKA_PORT"
  elif port_open 127.0.0.1 "$KAFKA_PORT"; then
    info "something already listens on 127.0.0.1:$KAFKA_PORT (not started by this script); using it as the Kafka broker"
  else
    # A new broker, a new log: the previous one is kept as kafka.log.1 (appending for ever grew it without bound).
    if [ -f "$KAFKA_LOG" ]; then mv -f "$KAFKA_LOG" "$KAFKA_LOG.1"; fi
    if [ ! -f "$KAFKA_DATA/meta.properties" ]; then
      step "formatting Kafka KRaft storage in $KAFKA_DATA"
      if [ ! -f "$KAFKA_STATE/cluster-id" ]; then
        kafka_java kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1 >"$KAFKA_STATE/cluster-id"
      fi
      kafka_java kafka.tools.StorageTool format --ignore-formatted \
        -t "$(cat "$KAFKA_STATE/cluster-id")" -c "$KAFKA_CONF" >>"$KAFKA_LOG" 2>&1 \
        || { tail -n 30 "$KAFKA_LOG" >&2; die "kafka.tools.StorageTool format failed"; }
    fi
    step "starting Kafka $KAFKA_VERSION on 127.0.0.1:$KAFKA_PORT (log: $KAFKA_LOG)"
    # setsid + nohup: the broker outlives this script (and the CI step that ran it).
    setsid nohup java $KAFKA_HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
      -Dlog4j.configuration="file:$KAFKA_LOG4J" -Dkafka.logs.dir="$KAFKA_STATE" \
      -cp "$KAFKA_LIB/*" kafka.Kafka "$KAFKA_CONF" >>"$KAFKA_LOG" 2>&1 </dev/null &
    echo $! >"$KAFKA_PID"
    echo "$KAFKA_VERSION" >"$KAFKA_STATE/running-version"
    KAFKA_STARTED=1

    step "waiting for Kafka to accept connections (timeout ${KAFKA_READY_TIMEOUT}s)"
    deadline=$(($(date +%s) + KAFKA_READY_TIMEOUT))
    ready=0
    while [ "$(date +%s)" -lt "$deadline" ]; do
      kafka_pid_alive || { tail -n 40 "$KAFKA_LOG" >&2; die "the Kafka broker exited during startup (log: $KAFKA_LOG)"; }
      if port_open 127.0.0.1 "$KAFKA_PORT"; then
        # The listener is up; ask the broker for its topics to be sure it serves metadata requests.
        if timeout 30 java -Xmx128m -Dlog4j.configuration="file:$KAFKA_LOG4J" -cp "$KAFKA_LIB/*" \
          org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT" --list >/dev/null 2>&1; then
          ready=1
          break
        fi
      fi
      sleep 1
    done
    if [ "$ready" -ne 1 ]; then
      echo "---- last lines of $KAFKA_LOG ----" >&2
      tail -n 40 "$KAFKA_LOG" >&2 || true
      die "Kafka did not become ready on 127.0.0.1:$KAFKA_PORT within ${KAFKA_READY_TIMEOUT}s"
    fi
  fi
  info "Kafka ready on 127.0.0.1:$KAFKA_PORT"

  # The SASL_SSL listener's SCRAM user, added through the plaintext listener (no authorizer: any client may) once per
  # formatted storage: the marker holds a digest of the storage's ids and the credentials. After adding it, and after
  # each start, a Java client lists the topics over SASL_SSL with SCRAM-SHA-512, checking the certificate against the CA.
  KAFKA_SASL_SSL_READY=0
  if kafka_pid_alive; then
    scram_marker="$KAFKA_STATE/scram-user"
    scram_digest=$({ grep -E '^(cluster|directory)\.id=' "$KAFKA_DATA/meta.properties"; echo "$KAFKA_SASL_USERNAME:$KAFKA_SASL_PASSWORD"; } | sha256sum | cut -d' ' -f1)
    scram_added=0
    if [ "$(cat "$scram_marker" 2>/dev/null)" != "$scram_digest" ]; then
      step "adding the SCRAM user $KAFKA_SASL_USERNAME (SCRAM-SHA-256 and SCRAM-SHA-512)"
      # One mechanism per request: KRaft refuses to alter one user's credentials twice in a request.
      for mechanism in SCRAM-SHA-256 SCRAM-SHA-512; do
        kafka_java kafka.admin.ConfigCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT" --alter \
          --entity-type users --entity-name "$KAFKA_SASL_USERNAME" \
          --add-config "$mechanism=[password=$KAFKA_SASL_PASSWORD]" >/dev/null \
          || die "kafka.admin.ConfigCommand could not add the $mechanism credential of $KAFKA_SASL_USERNAME"
      done
      scram_added=1
    fi
    if [ "$scram_added" -eq 1 ] || [ "$KAFKA_STARTED" -eq 1 ]; then
      step "checking the SASL_SSL listener on 127.0.0.1:$KAFKA_SASL_SSL_PORT (SCRAM-SHA-512, the test CA)"
      (
        umask 077
        cat >"$KAFKA_TLS_DIR/client.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$KAFKA_SASL_USERNAME" password="$KAFKA_SASL_PASSWORD";
ssl.truststore.type=PEM
ssl.truststore.location=$KAFKA_TLS_DIR/ca.crt
EOF
      )
      checked=0
      # A new SCRAM credential reaches the listener through the metadata log: give it a few tries.
      for _ in 1 2 3 4 5; do
        if timeout 30 java -Xmx128m -Dlog4j.configuration="file:$KAFKA_LOG4J" -cp "$KAFKA_LIB/*" \
          org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$KAFKA_SASL_SSL_PORT" \
          --command-config "$KAFKA_TLS_DIR/client.properties" --list >"$KAFKA_STATE/sasl-ssl-check.log" 2>&1; then
          checked=1
          break
        fi
        sleep 1
      done
      [ "$checked" -eq 1 ] || { tail -n 20 "$KAFKA_STATE/sasl-ssl-check.log" >&2; die "the SASL_SSL listener on 127.0.0.1:$KAFKA_SASL_SSL_PORT refused the test user (log: $KAFKA_LOG)"; }
      echo "$scram_digest" >"$scram_marker"

      step "checking the SSL listener on 127.0.0.1:$KAFKA_SSL_PORT (mutual TLS: the test client's certificate)"
      cat >"$KAFKA_TLS_DIR/mtls-client.properties" <<EOF
security.protocol=SSL
ssl.keystore.type=PEM
ssl.keystore.location=$KAFKA_TLS_DIR/client.pem
ssl.truststore.type=PEM
ssl.truststore.location=$KAFKA_TLS_DIR/ca.crt
EOF
      timeout 30 java -Xmx128m -Dlog4j.configuration="file:$KAFKA_LOG4J" -cp "$KAFKA_LIB/*" \
        org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$KAFKA_SSL_PORT" \
        --command-config "$KAFKA_TLS_DIR/mtls-client.properties" --list >"$KAFKA_STATE/ssl-check.log" 2>&1 \
        || { tail -n 20 "$KAFKA_STATE/ssl-check.log" >&2; die "the SSL listener on 127.0.0.1:$KAFKA_SSL_PORT refused the test client's certificate (log: $KAFKA_LOG)"; }
    fi
    KAFKA_SASL_SSL_READY=1
    info "Kafka SASL_SSL ready on 127.0.0.1:$KAFKA_SASL_SSL_PORT (user $KAFKA_SASL_USERNAME, CA $KAFKA_TLS_DIR/ca.crt)"
    info "Kafka SSL (mutual TLS) ready on 127.0.0.1:$KAFKA_SSL_PORT (client $KAFKA_TLS_DIR/client.crt)"
  else
    info "not started by this script: no SASL_SSL listener is known (the SASL_SSL tests fail under CI)"
  fi
fi

# ---------------------------------------------------------------------------------------------------
# helm (optional)
# ---------------------------------------------------------------------------------------------------
if [ "$PROVISION_HELM" = "1" ]; then
  if command -v helm >/dev/null && [ "$(command -v helm)" != "$BIN_DIR/helm" ]; then
    info "helm found on PATH: $(command -v helm) ($(helm version --short 2>/dev/null || echo '?'))"
  elif [ -x "$BIN_DIR/helm" ] && [ -f "$BIN_DIR/.helm-version" ] && [ "$(cat "$BIN_DIR/.helm-version")" = "$HELM_BUILD_ID" ]; then
    info "helm $HELM_VERSION cached at $BIN_DIR/helm"
  else
    command -v go >/dev/null || die "building helm needs Go (https://go.dev/dl) or put helm on PATH"
    step "building helm $HELM_VERSION from its Go module (go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION)"
    export GOMODCACHE="${GOMODCACHE:-$CACHE_DIR/go/mod}" GOCACHE="${GOCACHE:-$CACHE_DIR/go/build}"
    # Like helm's own Makefile: stamp the version and the Kubernetes version it was built against
    # (client-go v0.X -> 1.X); without it `helm template`/`helm lint` assume Kubernetes 1.20.
    helm_mod_dir=$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
    [ -f "$helm_mod_dir/go.mod" ] || die "go mod download helm.sh/helm/v3@$HELM_VERSION failed"
    k8s_minor=$(sed -n 's/^[[:space:]]*k8s\.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$helm_mod_dir/go.mod" | head -n 1)
    [ -n "$k8s_minor" ] || die "cannot find the k8s.io/client-go version in $helm_mod_dir/go.mod"
    ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
    for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
      ldflags="$ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
    done
    GOBIN="$BIN_DIR" GOFLAGS="${GOFLAGS:-} -trimpath" CGO_ENABLED=0 \
      go install -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
    echo "$HELM_BUILD_ID" >"$BIN_DIR/.helm-version"
    info "$("$BIN_DIR/helm" version --short)"
  fi
fi

# ---------------------------------------------------------------------------------------------------
# Test environment
# ---------------------------------------------------------------------------------------------------
cat >"$CACHE_DIR/test.env.tmp" <<EOF
export TEST_POSTGRES_URL=postgres://postgres:$PG_PASSWORD@$PG_HOST:$PG_PORT/postgres
export TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT
EOF
if [ "$PROVISION_KAFKA" = "1" ]; then
  echo "export TEST_KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT" >>"$CACHE_DIR/test.env.tmp"
fi
if [ "${KAFKA_SASL_SSL_READY:-0}" = "1" ]; then
  cat >>"$CACHE_DIR/test.env.tmp" <<EOF
export TEST_KAFKA_SASL_SSL_BROKERS=127.0.0.1:$KAFKA_SASL_SSL_PORT
export TEST_KAFKA_CA_FILE=$KAFKA_TLS_DIR/ca.crt
export TEST_KAFKA_SASL_USERNAME=$KAFKA_SASL_USERNAME
export TEST_KAFKA_SASL_PASSWORD=$KAFKA_SASL_PASSWORD
export TEST_KAFKA_SSL_BROKERS=127.0.0.1:$KAFKA_SSL_PORT
export TEST_KAFKA_CLIENT_CERT_FILE=$KAFKA_TLS_DIR/client.crt
export TEST_KAFKA_CLIENT_KEY_FILE=$KAFKA_TLS_DIR/client.key
EOF
fi
if [ "$PROVISION_HELM" = "1" ] && [ -x "$BIN_DIR/helm" ]; then
  echo "export PATH=\"$BIN_DIR:\$PATH\"" >>"$CACHE_DIR/test.env.tmp"
fi
mv "$CACHE_DIR/test.env.tmp" "$CACHE_DIR/test.env"

step "done in $(($(date +%s) - START_TS))s; test environment (also in $CACHE_DIR/test.env):"
sed 's/^/    /' "$CACHE_DIR/test.env"
