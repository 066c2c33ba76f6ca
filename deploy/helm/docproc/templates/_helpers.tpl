{{/*
Helpers for the docproc chart. Per-service helpers take a context built as
  (dict "root" $ "name" $name "svc" $svc)
so one template can loop over .Values.services.
*/}}

{{/* Chart name, truncated to the DNS label limit. */}}
{{- define "docproc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-scoped name prefix: fullnameOverride, or <release>-<chart> unless the release already contains the chart name. */}}
{{- define "docproc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* chart label value: name-version. */}}
{{- define "docproc.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Name of one component's objects (Deployment, Service, HPA, ...): <fullname>-<component>. */}}
{{- define "docproc.componentName" -}}
{{- printf "%s-%s" (include "docproc.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels: name + instance + component. Immutable once a Deployment
exists, so never add helm.sh/chart or a version here.
*/}}
{{- define "docproc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "docproc.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{/* Full labels for object metadata: selector labels + chart + version + managed-by. */}}
{{- define "docproc.labels" -}}
helm.sh/chart: {{ include "docproc.chart" .root }}
{{ include "docproc.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: docproc
{{- end }}

{{/* Labels for objects that belong to no single component (ConfigMap, ServiceAccount, ...). */}}
{{- define "docproc.commonLabels" -}}
{{ include "docproc.labels" (dict "root" . "name" "shared") }}
{{- end }}

{{/* Pod template labels: selector labels + part-of + user pod labels (no chart label: a chart bump alone must not roll pods). */}}
{{- define "docproc.podLabels" -}}
{{ include "docproc.selectorLabels" . }}
app.kubernetes.io/part-of: docproc
{{- with .root.Values.pod.labels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "docproc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "docproc.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "docproc.configMapName" -}}
{{- printf "%s-config" (include "docproc.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* ConfigMap read by the hook Jobs; itself a hook so it exists before pre-install Jobs run. */}}
{{- define "docproc.hookConfigMapName" -}}
{{- printf "%s-hooks" (include "docproc.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "docproc.mediaClaimName" -}}
{{- with .Values.common.storage.local.persistence.existingClaim }}
{{- . }}
{{- else }}
{{- printf "%s-media" (include "docproc.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
Image reference. Context: (dict "root" $ "image" <image values>).
[registry/]repository:tag, the tag defaulting to image.tag, then appVersion.
A tag that already carries a digest (skaffold: tag@sha256:...) is kept as is.
*/}}
{{- define "docproc.image" -}}
{{- $registry := .root.Values.image.registry }}
{{- $repository := required "image.repository is required" .image.repository }}
{{- $tag := .image.tag | default .root.Values.image.tag | default .root.Chart.AppVersion }}
{{- if $registry }}
{{- printf "%s/%s:%s" (trimSuffix "/" $registry) $repository $tag }}
{{- else }}
{{- printf "%s:%s" $repository $tag }}
{{- end }}
{{- end }}

{{/*
The topics a service's consumer group (named after the service) reads, as a JSON list:
its entry in consumers.yaml, which `make chart-consumers` generates from the code's one
declaration (docproc_common.bus.topics.SUBSCRIBERS). Context: per-service dict.
*/}}
{{- define "docproc.consumedTopics" -}}
{{- index (.root.Files.Get "consumers.yaml" | fromYaml) .name | default list | toJson }}
{{- end }}

{{/*
How a service scales. Context: per-service. Prints "keda", "hpa" or nothing.
Consumer services (with topics in consumers.yaml) follow autoscaling.mode; services
that consume nothing (upload) scale on CPU with an HPA.
*/}}
{{- define "docproc.scaler" -}}
{{- $svc := .svc }}
{{- if and $svc.autoscaling $svc.autoscaling.enabled }}
{{- $mode := .root.Values.autoscaling.mode }}
{{- $topics := include "docproc.consumedTopics" . | fromJsonArray }}
{{- if not $topics }}
{{- "hpa" }}
{{- else if eq $mode "keda" }}
{{- "keda" }}
{{- else if eq $mode "hpa" }}
{{- "hpa" }}
{{- else if .root.Capabilities.APIVersions.Has "keda.sh/v1alpha1" }}
{{- "keda" }}
{{- else }}
{{- "hpa" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Pod security context: non-root, fsGroup for the shared volume, RuntimeDefault seccomp. Not overridable on purpose. */}}
{{- define "docproc.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.pod.runAsUser }}
runAsGroup: {{ .Values.pod.runAsGroup }}
fsGroup: {{ .Values.pod.fsGroup }}
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* Container security context: read-only root FS, no privilege escalation, no capabilities. */}}
{{- define "docproc.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.pod.runAsUser }}
runAsGroup: {{ .Values.pod.runAsGroup }}
privileged: false
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
Env vars read from existing Secrets. Context: (dict "root" $ "secrets" <list of secret names>).
The chart never renders a secret value: only secretKeyRef / secretRef to Secrets the operator created.
*/}}
{{- define "docproc.secretEnv" -}}
{{- $s := .root.Values.secrets }}
{{- $wanted := .secrets | default list }}
{{- if has "database" $wanted }}
- name: DATABASE__URL
  valueFrom:
    secretKeyRef:
      name: {{ required "secrets.database.existingSecret is required" $s.database.existingSecret }}
      key: {{ $s.database.key }}
{{- end }}
{{- if has "jwt" $wanted }}
- name: AUTH__JWT_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ required "secrets.jwt.existingSecret is required" $s.jwt.existingSecret }}
      key: {{ $s.jwt.key }}
{{- end }}
{{- if has "vault" $wanted }}
- name: VAULT__MASTER_KEY
  valueFrom:
    secretKeyRef:
      name: {{ required "secrets.vault.existingSecret is required" $s.vault.existingSecret }}
      key: {{ $s.vault.key }}
{{- end }}
{{- if and (has "s3" $wanted) (eq .root.Values.common.storage.backend "s3") $s.s3.existingSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ $s.s3.existingSecret }}
      key: {{ $s.s3.accessKeyIdKey }}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $s.s3.existingSecret }}
      key: {{ $s.s3.secretAccessKeyKey }}
{{- end }}
{{- end }}

{{/* envFrom: the shared ConfigMap (or the hook ConfigMap) plus the Kafka client Secret when one is named. */}}
{{- define "docproc.envFrom" -}}
- configMapRef:
    name: {{ .configMap }}
{{- if and (has "kafka" (.secrets | default list)) .root.Values.secrets.kafka.existingSecret }}
- secretRef:
    name: {{ .root.Values.secrets.kafka.existingSecret }}
{{- end }}
{{- end }}

{{/* Plain env from a map, sorted by name. */}}
{{- define "docproc.envMap" -}}
{{- range $k, $v := . }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- end }}

{{/* The broker's name for a topic or consumer group: "<common.kafka.namespace>.<name>" (KafkaSettings.on_broker). Context: dict root, name. */}}
{{- define "docproc.onBroker" -}}
{{- with .root.Values.common.kafka.namespace }}{{ printf "%s.%s" . $.name }}{{ else }}{{ .name }}{{ end }}
{{- end }}

{{/* Shared settings (ConfigMap data), also copied into the hook ConfigMap. Context: root. */}}
{{- define "docproc.configData" -}}
{{- $c := .Values.common -}}
ENV: {{ $c.environment | quote }}
BUS__MODE: "kafka"
KAFKA__BOOTSTRAP_SERVERS: {{ required "common.kafka.bootstrapServers is required" $c.kafka.bootstrapServers | quote }}
KAFKA__NAMESPACE: {{ $c.kafka.namespace | default "" | quote }}
{{- /* the topics Job and every consumer creating its retry/DLQ topics use the same two */}}
KAFKA__TOPIC_PARTITIONS: {{ .Values.jobs.topics.partitions | quote }}
KAFKA__TOPIC_REPLICATION: {{ .Values.jobs.topics.replication | quote }}
HTTP__HOST: "0.0.0.0"
HTTP__PORT: "8000"
HOME: "/tmp"
TMPDIR: "/tmp"
DOCPROC_HOME: "/tmp/docproc"
STORAGE__BACKEND: {{ $c.storage.backend | quote }}
{{- if eq $c.storage.backend "s3" }}
STORAGE__S3_BUCKET: {{ required "common.storage.s3.bucket is required when common.storage.backend=s3" $c.storage.s3.bucket | quote }}
STORAGE__S3_PREFIX: {{ $c.storage.s3.prefix | quote }}
STORAGE__S3_REGION: {{ $c.storage.s3.region | quote }}
STORAGE__S3_SSE: {{ $c.storage.s3.sse | quote }}
{{- with $c.storage.s3.endpointUrl }}
STORAGE__S3_ENDPOINT_URL: {{ . | quote }}
{{- end }}
{{- with $c.storage.s3.kmsKeyId }}
STORAGE__S3_KMS_KEY_ID: {{ . | quote }}
{{- end }}
{{- else }}
STORAGE__MEDIA_DIR: {{ $c.storage.local.mediaDir | quote }}
{{- end }}
LIMITS__MAX_UPLOAD_SIZE_MB: {{ $c.limits.maxUploadSizeMb | quote }}
{{- /* the seed's name, once: the chat frontend reads this same key of this ConfigMap */}}
CHAT_MAX_UPLOAD_SIZE_MB: {{ $c.limits.chatMaxUploadSizeMb | quote }}
LIMITS__FILE_IO_MAX_WORKERS: {{ $c.limits.fileIoMaxWorkers | quote }}
STUCK_AFTER_MINUTES: {{ $c.stuckAfterMinutes | quote }}
{{- /* the parser's fact, read by upload and sync, checked by the parser's readiness */}}
FORMATS__LITEPARSE: {{ $c.parserFormats.liteparse | quote }}
FORMATS__OFFICE: {{ $c.parserFormats.office | toJson | quote }}
{{- /* read by the API (a vision model profile's address) and the parser (before it sends) */}}
PARSER__VISION_ALLOWED_BASE_URLS: {{ $c.vision.allowedBaseUrls | toJson | quote }}
{{- with $c.otel.endpoint }}
OTEL__EXPORTER_OTLP_ENDPOINT: {{ . | quote }}
{{- end }}
{{- range $k, $v := $c.env }}
{{ $k }}: {{ $v | toString | quote }}
{{- end }}
{{- end }}

{{/* The port a component serves /metrics on, apart from its API port: services.<svc>.metricsPort, else metrics.port. Context: per-service dict. */}}
{{- define "docproc.metricsPort" -}}
{{- .svc.metricsPort | default .root.Values.metrics.port }}
{{- end }}

{{/* Probe: path + timing knobs. Context: (dict "path" "/healthz" "probe" <values>). */}}
{{- define "docproc.probe" -}}
httpGet:
  path: {{ .path }}
  port: http
{{- with .probe }}
{{- toYaml . | nindent 0 }}
{{- end }}
{{- end }}

{{/*
The one pod spec every service Deployment uses (prometheus-pushgateway's podSpec idea).
Context: per-service dict.
*/}}
{{- define "docproc.podSpec" -}}
{{- $root := .root }}
{{- $svc := .svc }}
{{- $v := $root.Values }}
{{- $probes := mustMergeOverwrite (deepCopy $v.probes) (deepCopy ($svc.probes | default dict)) -}}
{{- $port := $svc.containerPort | default 8000 -}}
{{- $metricsPort := include "docproc.metricsPort" . | int -}}
{{- /* the mounted cross-encoder: upload reranks with it, the embedder serves it */}}
{{- $reranks := and (not (empty $v.common.rerankModel.volume)) (has .name (list "upload" "embedder")) -}}
{{- /* mounted embedding models: upload embeds queries, the embedder chunks */}}
{{- $models := and $v.embeddingModels.enabled (has .name (list "upload" "embedder")) -}}
{{- if and $models (not $v.embeddingModels.volume) }}
{{- fail "embeddingModels.volume: a volume source is required when embeddingModels.enabled" }}
{{- end }}
{{- if eq (int $port) $metricsPort }}
{{- fail (printf "services.%s: the metrics port (%d) must differ from the container port" .name $metricsPort) }}
{{- end }}
serviceAccountName: {{ include "docproc.serviceAccountName" $root }}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.pod.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
terminationGracePeriodSeconds: {{ $svc.terminationGracePeriodSeconds | default $v.pod.terminationGracePeriodSeconds }}
securityContext:
  {{- include "docproc.podSecurityContext" $root | nindent 2 }}
containers:
  - name: {{ .name }}
    image: {{ include "docproc.image" (dict "root" $root "image" $svc.image) }}
    imagePullPolicy: {{ $v.image.pullPolicy }}
    {{- /* args, not command: the image's tini ENTRYPOINT stays PID 1 */}}
    args:
      {{- toYaml $svc.command | nindent 6 }}
    ports:
      - name: http
        containerPort: {{ $port }}
        protocol: TCP
      - name: metrics
        containerPort: {{ $metricsPort }}
        protocol: TCP
    envFrom:
      {{- include "docproc.envFrom" (dict "root" $root "secrets" $svc.secrets "configMap" (include "docproc.configMapName" $root)) | nindent 6 }}
      {{- with $svc.extraEnvFrom }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    env:
      - name: OTEL_SERVICE_NAME
        value: {{ printf "docproc-%s" .name | quote }}
      {{- if $svc.containerPort }}
      - name: HTTP__PORT
        value: {{ $port | quote }}
      {{- end }}
      - name: HTTP__METRICS_PORT
        value: {{ $metricsPort | quote }}
      {{- with include "docproc.secretEnv" (dict "root" $root "secrets" $svc.secrets) | trim }}
      {{- . | nindent 6 }}
      {{- end }}
      {{- with include "docproc.envMap" $svc.env | trim }}
      {{- . | nindent 6 }}
      {{- end }}
      {{- if $reranks }}
      - name: EMBEDDER__RERANK_MODEL_DIR
        value: {{ $v.common.rerankModel.mountPath | quote }}
      {{- end }}
      {{- if $models }}
      - name: EMBEDDER__MODELS_DIR
        value: {{ $v.embeddingModels.mountPath | quote }}
      {{- end }}
    startupProbe:
      {{- include "docproc.probe" (dict "path" "/healthz" "probe" $probes.startup) | nindent 6 }}
    livenessProbe:
      {{- include "docproc.probe" (dict "path" "/healthz" "probe" $probes.liveness) | nindent 6 }}
    readinessProbe:
      {{- include "docproc.probe" (dict "path" "/readyz" "probe" $probes.readiness) | nindent 6 }}
    resources:
      {{- toYaml $svc.resources | nindent 6 }}
    securityContext:
      {{- include "docproc.containerSecurityContext" $root | nindent 6 }}
    volumeMounts:
      - name: tmp
        mountPath: /tmp
      {{- if eq $v.common.storage.backend "local" }}
      - name: media
        mountPath: {{ $v.common.storage.local.mediaDir }}
      {{- end }}
      {{- if $reranks }}
      - name: rerank-model
        mountPath: {{ $v.common.rerankModel.mountPath }}
        readOnly: true
      {{- end }}
      {{- if $models }}
      - name: embedding-models
        mountPath: {{ $v.embeddingModels.mountPath }}
        readOnly: true
      {{- end }}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: {{ $svc.tmpSizeLimit | default "1Gi" }}
  {{- if eq $v.common.storage.backend "local" }}
  - name: media
    persistentVolumeClaim:
      claimName: {{ include "docproc.mediaClaimName" $root }}
  {{- end }}
  {{- if $reranks }}
  - name: rerank-model
    {{- toYaml $v.common.rerankModel.volume | nindent 4 }}
  {{- end }}
  {{- if $models }}
  - name: embedding-models
    {{- toYaml $v.embeddingModels.volume | nindent 4 }}
  {{- end }}
{{- with ($svc.nodeSelector | default $v.pod.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with ($svc.tolerations | default $v.pod.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with ($svc.affinity | default $v.pod.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $v.pod.spreadAcrossNodes }}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "docproc.selectorLabels" . | nindent 8 }}
{{- end }}
{{- end }}

{{/*
Pod spec of a hook Job. Context: (dict "root" $ "name" "migrate" "command" <list>).
Reads only the hook ConfigMap and existing Secrets, both present before pre-install hooks run.
*/}}
{{- define "docproc.jobPodSpec" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
{{- $j := $v.jobs -}}
restartPolicy: Never
automountServiceAccountToken: false
enableServiceLinks: false
{{- with $j.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- include "docproc.podSecurityContext" $root | nindent 2 }}
containers:
  - name: {{ .name }}
    image: {{ include "docproc.image" (dict "root" $root "image" $j.image) }}
    imagePullPolicy: {{ $v.image.pullPolicy }}
    args:
      {{- toYaml .command | nindent 6 }}
    envFrom:
      {{- include "docproc.envFrom" (dict "root" $root "secrets" .secrets "configMap" (include "docproc.hookConfigMapName" $root)) | nindent 6 }}
    env:
      - name: OTEL_SERVICE_NAME
        value: {{ printf "docproc-%s" .name | quote }}
      {{- with include "docproc.secretEnv" (dict "root" $root "secrets" .secrets) | trim }}
      {{- . | nindent 6 }}
      {{- end }}
    resources:
      {{- toYaml $j.resources | nindent 6 }}
    securityContext:
      {{- include "docproc.containerSecurityContext" $root | nindent 6 }}
    volumeMounts:
      - name: tmp
        mountPath: /tmp
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: 256Mi
{{- with $v.pod.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.pod.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Egress rules of the NetworkPolicies: DNS (when enabled) + networkPolicy.egress. Context: root. */}}
{{- define "docproc.egressRules" -}}
{{- if .Values.networkPolicy.dns.enabled }}
- to:
    - namespaceSelector: {}
      podSelector:
        matchLabels:
          {{- toYaml .Values.networkPolicy.dns.podLabels | nindent 10 }}
  ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- end }}
{{- with .Values.networkPolicy.egress }}
{{ toYaml . }}
{{- end }}
{{- end }}
