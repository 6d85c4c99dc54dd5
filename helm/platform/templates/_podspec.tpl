{{/*
Pod spec shared by the per-target Deployments, the all-in-one Deployment and the migrations Job.
Call with (dict
  "root" $                     chart root context
  "component" "identity"       target name, or "all"
  "edge" true/false            serve the edge on the public port (PORT, container port `http`): the gateway and the
                               all-in-one process; the others listen only on gRPC and the ops port
  "grpc" true/false            host a gRPC server (GRPC_PORT)
  "grpcExposed" true/false     ... reachable from other pods: GRPC_HOST=0.0.0.0 and a containerPort (service targets;
                               the all-in-one process keeps it on loopback, the default of --target=all)
  "grpcReadiness" true/false   readiness by native gRPC health (service targets), else HTTP /readyz on the ops port;
                               startup and liveness are HTTP /healthz on the ops port either way
  "t" $values                  effective per-target values (resources, extraEnv, nodeSelector, tolerations, affinity)
  "dataVolume" $source         volume source mounted on DATA_DIR
  "command" (list "migrate")   optional: a command run once (a Job's pod, restartPolicy Never) instead of serving
                               --target=<component>: no ports, probes or preStop hook, since it listens on nothing)
Every serving pod gets OPS_PORT and the container port `ops` (/healthz, /readyz, /metrics: probes and Prometheus).
*/}}
{{- define "platform.podSpec" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $t := .t -}}
{{- if eq (int $v.ports.ops) (int $v.ports.http) -}}
{{- fail "ports.ops must differ from ports.http: the ops endpoints are not served on the public port" -}}
{{- end -}}
serviceAccountName: {{ include "platform.serviceAccountName" $root }}
automountServiceAccountToken: {{ $v.serviceAccount.automountServiceAccountToken }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml $v.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ include "platform.terminationGrace" $root }}
enableServiceLinks: false
{{- if .command }}
restartPolicy: Never
{{- end }}
containers:
  - name: platform
    image: {{ include "platform.image" $root | quote }}
    imagePullPolicy: {{ $v.image.pullPolicy }}
    args:
      {{- if .command }}
      {{- toYaml .command | nindent 6 }}
      {{- else }}
      - {{ printf "--target=%s" .component | quote }}
      {{- end }}
    {{- if not .command }}
    ports:
      {{- if .edge }}
      - name: http
        containerPort: {{ $v.ports.http }}
        protocol: TCP
      {{- end }}
      - name: ops
        containerPort: {{ $v.ports.ops }}
        protocol: TCP
      {{- if .grpcExposed }}
      - name: grpc
        containerPort: {{ $v.ports.grpc }}
        protocol: TCP
      {{- end }}
    {{- end }}
    envFrom:
      - configMapRef:
          name: {{ include "platform.configMapName" $root }}
      - secretRef:
          name: {{ include "platform.secretName" $root }}
      {{- with $v.extraEnvFrom }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    env:
      {{- if .edge }}
      - name: PORT
        value: {{ $v.ports.http | quote }}
      {{- end }}
      - name: OPS_PORT
        value: {{ $v.ports.ops | quote }}
      {{- if .grpcExposed }}
      {{- /* Plaintext, unauthenticated gRPC whose callers are believed: the NetworkPolicy (networkpolicy.yaml)
             admits only this release's pods to it. */}}
      - name: GRPC_HOST
        value: "0.0.0.0"
      {{- end }}
      {{- if .grpc }}
      - name: GRPC_PORT
        value: {{ $v.ports.grpc | quote }}
      {{- end }}
      - name: DATA_DIR
        value: "/data"
      {{- if not (hasKey $v.config "OTEL_SERVICE_NAME") }}
      - name: OTEL_SERVICE_NAME
        value: {{ printf "mcp-platform-%s" .component | quote }}
      {{- end }}
      {{- if not (hasKey $v.config "PLATFORM_VERSION") }}
      - name: PLATFORM_VERSION
        value: {{ default $root.Chart.AppVersion $v.image.tag | toString | quote }}
      {{- end }}
      - name: POD_NAME
        valueFrom:
          fieldRef:
            fieldPath: metadata.name
      {{- if not (hasKey $v.config "OTEL_RESOURCE_ATTRIBUTES") }}
      - name: OTEL_RESOURCE_ATTRIBUTES
        value: {{ printf "service.instance.id=$(POD_NAME),k8s.pod.name=$(POD_NAME),k8s.namespace.name=%s" $root.Release.Namespace | quote }}
      {{- end }}
      {{- if not $v.allInOne.enabled }}
      {{- include "platform.serviceAddrEnv" $root | trim | nindent 6 }}
      {{- end }}
      {{- with $v.extraEnv }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
      {{- with $t.extraEnv }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    {{- /* Kubernetes removes a terminating pod from Service endpoints and Ingress backends while it sends SIGTERM;
           the sleep lets kube-proxy and the Ingress controller stop routing to it before the process stops
           accepting. An exec of the image's /bin/sleep, not the `sleep` lifecycle action (beta only since
           Kubernetes 1.30, and the chart supports 1.27). */}}
    {{- if not .command }}
    {{- with (int $v.shutdown.preStopSleepSeconds) }}
    lifecycle:
      preStop:
        exec:
          command: ["/bin/sleep", {{ . | toString | quote }}]
    {{- end }}
    {{- include "platform.probes" (dict "root" $root "grpcReadiness" .grpcReadiness) | nindent 4 }}
    {{- end }}
    {{- with $t.resources }}
    resources:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    securityContext:
      {{- toYaml $v.securityContext | nindent 6 }}
    volumeMounts:
      - name: tmp
        mountPath: /tmp
      - name: data
        mountPath: /data
      {{- with $v.extraVolumeMounts }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
volumes:
  {{- include "platform.tmpVolume" $root | nindent 2 }}
  - name: data
    {{- toYaml .dataVolume | nindent 4 }}
  {{- with $v.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with (default $v.nodeSelector $t.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $v.affinity $t.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $v.tolerations $t.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
