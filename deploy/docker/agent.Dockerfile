# Node agent image: the JNI shim links libnetfilter_queue, libmnl and libnftables at run time.
# Build from the repository root:
#   docker build -f deploy/docker/agent.Dockerfile -t kube-verdict/agent .
FROM eclipse-temurin:17-jdk AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      gcc libc6-dev libnetfilter-queue-dev libnftables-dev libmnl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN ./mvnw -B -q -DskipTests -pl dataplane-jni -am package

FROM eclipse-temurin:17-jre
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      libnetfilter-queue1 libmnl0 libnftables1 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/dataplane-jni/target/kube-verdict-agent.jar /opt/kube-verdict/agent.jar
ENTRYPOINT ["java", "--enable-native-access=ALL-UNNAMED", "-jar", "/opt/kube-verdict/agent.jar"]
CMD ["agent", "--help"]
