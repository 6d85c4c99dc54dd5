{{/* Chart name. */}}
{{- define "platform.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release full name, at most 40 characters so "<fullname>-<target>" stays a valid DNS label. */}}
{{- define "platform.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "platform.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Common labels. */}}
{{- define "platform.labels" -}}
helm.sh/chart: {{ include "platform.chart" . }}
{{ include "platform.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "platform.name" . }}
{{- end -}}

{{- define "platform.selectorLabels" -}}
app.kubernetes.io/name: {{ include "platform.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels of one component. Call with (dict "root" $ "component" "identity"). */}}
{{- define "platform.componentLabels" -}}
{{ include "platform.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "platform.componentSelectorLabels" -}}
{{ include "platform.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Name of a target's Deployment/Service. Call with (dict "root" $ "target" "identity"). */}}
{{- define "platform.targetName" -}}
{{- printf "%s-%s" (include "platform.fullname" .root) .target | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "platform.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "platform.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "platform.configMapName" -}}
{{- printf "%s-config" (include "platform.fullname" .) -}}
{{- end -}}

{{- define "platform.secretName" -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecret -}}
{{- else -}}
{{- printf "%s-secrets" (include "platform.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "platform.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag | toString) -}}
{{- end -}}

{{/* Is the target a gRPC service target (anything other than the HTTP edge)? */}}
{{- define "platform.isServiceTarget" -}}
{{- if eq (toString (default "service" .kind)) "service" -}}true{{- end -}}
{{- end -}}

{{/* <NAME>_SERVICE_ADDR for every service target: the per-target Service when the target is
     enabled here, else externalServiceAddrs.<name> when given. */}}
{{- define "platform.serviceAddrEnv" -}}
{{- $root := . -}}
{{- range $name, $raw := .Values.targets }}
{{- $t := mustMergeOverwrite (deepCopy $root.Values.targetDefaults) (deepCopy (default dict $raw)) }}
{{- if include "platform.isServiceTarget" $t }}
{{- $addr := "" }}
{{- if $t.enabled }}
{{- $addr = printf "%s:%v" (include "platform.targetName" (dict "root" $root "target" $name)) $root.Values.ports.grpc }}
{{- else if hasKey $root.Values.externalServiceAddrs $name }}
{{- $addr = index $root.Values.externalServiceAddrs $name }}
{{- end }}
{{- if $addr }}
- name: {{ printf "%s_SERVICE_ADDR" (upper $name) }}
  value: {{ $addr | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Checksums that roll the pods when configuration changes. */}}
{{- define "platform.configChecksums" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if not .Values.secrets.existingSecret }}
{{- /* The rendered Secret, whose data includes ENCRYPTION_KEY: a digest of the values alone could be matched offline
       against guesses of a weak password by anyone who may read a Deployment. */}}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end -}}

{{/* Volumes shared by all pods. */}}
{{- define "platform.tmpVolume" -}}
- name: tmp
  emptyDir:
    {{- with .Values.tmpVolume.sizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
{{- end -}}

{{/* Probes, all on the ops listener (ports.ops) but the service targets' readiness. Startup and liveness: /healthz,
     which answers as long as the process runs. Readiness: /readyz (gateway, all-in-one), or native gRPC health
     (grpc.health.v1) on the gRPC port for service targets ("grpcReadiness"): it is NOT_SERVING while a dependency
     (database, Redis, Kafka) fails, which must take the pod out of its Service but never restart it, so it is
     never the liveness probe. Call with (dict "root" $ "grpcReadiness" true/false). */}}
{{- define "platform.probes" -}}
{{- $v := .root.Values -}}
startupProbe:
  httpGet:
    path: /healthz
    port: ops
  {{- toYaml $v.probes.startup | nindent 2 }}
livenessProbe:
  httpGet:
    path: /healthz
    port: ops
  {{- toYaml $v.probes.liveness | nindent 2 }}
readinessProbe:
  {{- if .grpcReadiness }}
  grpc:
    port: {{ $v.ports.grpc }}
  {{- else }}
  httpGet:
    path: /readyz
    port: ops
  {{- end }}
  {{- toYaml $v.probes.readiness | nindent 2 }}
{{- end -}}

{{/* terminationGracePeriodSeconds: it counts from the start of the preStop hook, so the hook's sleep, the app's
     shutdown timeout (SHUTDOWN_TIMEOUT_SECONDS, as given in `config`) and a margin. */}}
{{- define "platform.terminationGrace" -}}
{{- $s := .Values.shutdown -}}
{{- if lt (int $s.preStopSleepSeconds) 0 -}}
{{- fail "shutdown.preStopSleepSeconds must be 0 (no preStop hook) or more" -}}
{{- end -}}
{{- /* The executable gives up 5 s after SHUTDOWN_TIMEOUT_SECONDS (main.ts), logging that it timed out: a SIGKILL
       before then would cut its last phase (relays, call records) without that line. */ -}}
{{- if lt (int $s.graceMarginSeconds) 6 -}}
{{- fail "shutdown.graceMarginSeconds must be at least 6: the process may stop for SHUTDOWN_TIMEOUT_SECONDS plus 5 s before it exits by itself, and the grace period has to outlast that and the preStop sleep" -}}
{{- end -}}
{{- add (int $s.preStopSleepSeconds) (int (default "25" .Values.config.SHUTDOWN_TIMEOUT_SECONDS)) (int $s.graceMarginSeconds) -}}
{{- end -}}
